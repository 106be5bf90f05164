package guest

import "encoding/json"

// ProtocolVersion is the version of docs/guests/protocol.md this lab speaks.
const ProtocolVersion = 1

// request is one line to the guest.
type request struct {
	ID        int64        `json:"id"`
	Op        string       `json:"op"`
	Protocol  int          `json:"protocol,omitempty"`
	Config    *helloConfig `json:"config,omitempty"`
	Key       string       `json:"key,omitempty"`
	Lease     string       `json:"lease,omitempty"`
	Target    int64        `json:"target,omitempty"`
	TimeoutMS *int64       `json:"timeout_ms,omitempty"`
}

type helloConfig struct {
	Servers  map[string][]string `json:"servers"`
	TTLMS    int64               `json:"ttl_ms"`
	ClientID string              `json:"client_id"`
	Fenced   bool                `json:"fenced"`
}

// line is anything the guest writes: an answer (ID and OK set) or an
// event (Event set).
type line struct {
	ID    *int64       `json:"id"`
	OK    *bool        `json:"ok"`
	Event string       `json:"event"`
	Error *answerError `json:"error"`

	// hello
	Name         string        `json:"name"`
	Version      string        `json:"version"`
	Protocol     int           `json:"protocol"`
	Capabilities *Capabilities `json:"capabilities"`

	// grants and events
	Lease        string  `json:"lease"`
	Token        *uint64 `json:"token"`
	ValidUntilMS *int64  `json:"valid_until_ms"`
	Reason       string  `json:"reason"`
}

type answerError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// The error kinds of an answer.
const (
	kindHeld     = "held"
	kindLost     = "lost"
	kindBackend  = "backend"
	kindUnknown  = "unknown"
	kindTimeout  = "timeout"
	kindProtocol = "protocol"
)

func encode(r request) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
