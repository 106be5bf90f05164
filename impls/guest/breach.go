package guest

import "fmt"

// Breach names how a guest broke the protocol.
type Breach string

// The breaches docs/guests/protocol.md lists, each a precise error.
const (
	BreachCrashAtStart    Breach = "crash at start"
	BreachSilentAtStart   Breach = "silence at start"
	BreachVersion         Breach = "wrong protocol version"
	BreachCapabilities    Breach = "capabilities differ from the manifest"
	BreachBadJSON         Breach = "bad JSON"
	BreachAnswerToNothing Breach = "an answer to nothing"
	BreachSilence         Breach = "silence"
	BreachCrash           Breach = "crash"
	BreachProtocolAnswer  Breach = "the guest refused a request as not understood"
)

// ProtocolError is the error of a guest that broke the protocol: the lab
// stopped it, and every request in progress or made later fails with it.
type ProtocolError struct {
	Guest  string
	Breach Breach
	Detail string
	// Stderr is the end of what the guest wrote to its stderr.
	Stderr string
}

func (e *ProtocolError) Error() string {
	s := fmt.Sprintf("guest %s broke the protocol (%s): %s", e.Guest, e.Breach, e.Detail)
	if e.Stderr != "" {
		s += "\n--- the guest's stderr (end) ---\n" + e.Stderr
	}
	return s
}
