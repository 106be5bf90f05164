package linearizability

import "fmt"

// Promotion is a fail-over as its servers recorded it: the master's (or
// primary's) write position when the fault struck, and the promoted
// replica's own position when it was promoted, each read from the servers
// (Redis: master_repl_offset against the replica's processed offset;
// PostgreSQL: the WAL insert position against the replica's received
// WAL; MariaDB: the binary log's GTID position against the replica's).
// Whether a fail-over lost the holder's grant is read here, not assumed
// from what the fault meant to do: over loopback a replica is usually a
// millisecond behind, and then the fail-over loses nothing.
type Promotion struct {
	// Master is the server the fault struck; MasterAt its write position
	// then, as the server names and gives it.
	Master   string `json:"master"`
	MasterAt string `json:"master_at,omitempty"`
	// Promoted is the replica put in its place ("" when none was by the
	// time the record was made); PromotedAt its own position when
	// promoted.
	Promoted   string `json:"promoted,omitempty"`
	PromotedAt string `json:"promoted_at,omitempty"`
	// Behind is how much of MasterAt the promoted replica lacked, in Unit
	// (bytes of the replication stream, or transactions): 0 when it had
	// everything the master had written when the fault struck.
	Behind int64  `json:"behind"`
	Unit   string `json:"unit,omitempty"`
	// Unread says why a position could not be read; Behind then means
	// nothing.
	Unread string `json:"unread,omitempty"`
}

// Known reports whether both positions were read and a replica was
// promoted, so Behind says what the promotion lost.
func (p Promotion) Known() bool { return p.Unread == "" && p.Promoted != "" }

// Lacked reports whether the promoted replica lacked part of what the
// master had written when the fault struck.
func (p Promotion) Lacked() bool { return p.Known() && p.Behind > 0 }

// String is the record as one line for people.
func (p Promotion) String() string {
	switch {
	case p.Unread != "":
		return fmt.Sprintf("%s at the strike: %s; promotion unread: %s", p.Master, orDash(p.MasterAt), p.Unread)
	case p.Promoted == "":
		return fmt.Sprintf("%s at the strike: %s; no replica promoted when the record was made", p.Master, orDash(p.MasterAt))
	case p.Behind > 0:
		return fmt.Sprintf("%s at the strike: %s; %s promoted at %s: lacked the last %d %s the master wrote before the strike",
			p.Master, p.MasterAt, p.Promoted, p.PromotedAt, p.Behind, p.Unit)
	}
	return fmt.Sprintf("%s at the strike: %s; %s promoted at %s: had everything the master wrote before the strike",
		p.Master, p.MasterAt, p.Promoted, p.PromotedAt)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
