package topology

// PGKeepalivesName is one PostgreSQL, as on the single topology, with the
// settings production servers are given so that a client gone silent
// (its host down, a partition) does not keep its session, and the locks
// bound to it, for hours: a TCP keep-alive that probes a connection idle
// for a second, a second apart, and gives it up when two probes go
// unanswered (tcp_keepalives_idle, tcp_keepalives_interval,
// tcp_keepalives_count), and a user timeout that gives it up when data
// the server sent stays unacknowledged for 3 s (tcp_user_timeout). The
// keep-alive alone is not enough: a connection with a reply in flight is
// not idle, so the kernel retransmits it on its backoff for about 15
// minutes (tcp_retries2) and sends no probe. Measured: a cut landing a
// few milliseconds after the grant's reply, before the client's delayed
// acknowledgement, kept pg-advisory's session past an 8 s cut in 3 runs
// of 3 with the keep-alive alone (ss showed the server's 36-byte reply
// retransmitting). The probes are answered by the client's kernel, so a
// stopped or slow holder keeps its session; only a holder the server can
// no longer reach loses it, about PGSilence after the last packet it
// heard or its first unacknowledged reply.
const PGKeepalivesName = "pg-keepalives"

// The keep-alive and user timeout pg-keepalives declares, in the units
// PostgreSQL takes them (seconds; tcp_user_timeout in milliseconds).
const (
	PGKeepaliveIdle     = "1"
	PGKeepaliveInterval = "1"
	PGKeepaliveCount    = "2"
	PGUserTimeoutMillis = "3000"
	// PGSilence is idle + count × interval, and the user timeout: how long
	// after the last packet it heard the server's kernel gives the
	// connection up.
	PGSilence = "3s"
)

func init() {
	Register(Named{
		Name: PGKeepalivesName,
		Summary: "one PostgreSQL that gives a silent client's connection up, and ends its session, " + PGSilence + " after it last heard it: " +
			"keep-alive probes after " + PGKeepaliveIdle + " s idle, every " + PGKeepaliveInterval + " s, " + PGKeepaliveCount + " unanswered " +
			"(tcp_keepalives_idle, tcp_keepalives_interval, tcp_keepalives_count), and tcp_user_timeout=" + PGUserTimeoutMillis +
			" ms for a reply left unacknowledged, as production servers are configured against clients that vanish",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{Postgres},
		Declare: func(need Need) (Declaration, error) {
			return timedOut(need, Postgres, map[string]string{
				"tcp_keepalives_idle":     PGKeepaliveIdle,
				"tcp_keepalives_interval": PGKeepaliveInterval,
				"tcp_keepalives_count":    PGKeepaliveCount,
				"tcp_user_timeout":        PGUserTimeoutMillis,
			})
		},
	})
}
