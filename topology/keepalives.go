package topology

// The TCP keep-alive production database servers are configured with so
// that a client gone silent (its host down, a partition) does not keep
// its session, and the locks bound to it, for the kernel's default two
// hours: one server of the kind, as on the single topology, that probes a
// connection idle for a second, a second apart, and ends the session when
// two probes go unanswered. The probes are answered by the client's
// kernel, so a stopped or slow holder keeps its session; only a holder
// the server can no longer reach loses it, about
// KeepaliveSilence after the last packet it heard.
const (
	// PGKeepalivesName is one PostgreSQL with tcp_keepalives_idle,
	// tcp_keepalives_interval and tcp_keepalives_count set.
	PGKeepalivesName = "pg-keepalives"
	// MySQLKeepalivesName is one MySQL (MariaDB) with tcp_keepalive_time,
	// tcp_keepalive_interval and tcp_keepalive_probes set (MariaDB 10.3.6
	// and later; the server turns keep-alive on for every client socket).
	MySQLKeepalivesName = "mysql-keepalives"
)

// The keep-alive both topologies declare, in whole seconds (the least
// either server takes): the first probe after KeepaliveIdle of silence,
// then one every KeepaliveInterval, KeepaliveCount unanswered ending it.
const (
	KeepaliveIdle     = "1"
	KeepaliveInterval = "1"
	KeepaliveCount    = "2"
	// KeepaliveSilence is idle + count × interval: how long after the last
	// packet it heard the server's kernel gives the connection up.
	KeepaliveSilence = "3s"
)

func init() {
	Register(Named{
		Name: PGKeepalivesName,
		Summary: "one PostgreSQL that probes a connection silent for " + KeepaliveIdle + " s every " + KeepaliveInterval +
			" s and ends its session after " + KeepaliveCount + " unanswered probes (tcp_keepalives_idle, tcp_keepalives_interval, " +
			"tcp_keepalives_count; " + KeepaliveSilence + " of silence in all), as production servers are configured against clients that vanish",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{Postgres},
		Declare: func(need Need) (Declaration, error) {
			return timedOut(need, Postgres, map[string]string{
				"tcp_keepalives_idle":     KeepaliveIdle,
				"tcp_keepalives_interval": KeepaliveInterval,
				"tcp_keepalives_count":    KeepaliveCount,
			})
		},
	})
	Register(Named{
		Name: MySQLKeepalivesName,
		Summary: "one MySQL (MariaDB) that probes a connection silent for " + KeepaliveIdle + " s every " + KeepaliveInterval +
			" s and ends its session after " + KeepaliveCount + " unanswered probes (tcp_keepalive_time, tcp_keepalive_interval, " +
			"tcp_keepalive_probes; " + KeepaliveSilence + " of silence in all), as production servers are configured against clients that vanish",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{MySQL},
		Declare: func(need Need) (Declaration, error) {
			return timedOut(need, MySQL, map[string]string{
				"tcp_keepalive_time":     KeepaliveIdle,
				"tcp_keepalive_interval": KeepaliveInterval,
				"tcp_keepalive_probes":   KeepaliveCount,
			})
		},
	})
}
