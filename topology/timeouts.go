package topology

import "fmt"

// The session timeouts production servers are configured with, declared as
// topologies so that a scenario never sets a server setting itself: one
// server of the kind, as on the single topology, whose server ends a
// session that has been idle (in a transaction or not) past the timeout.
// A lock bound to that session ends with it, whether or not its holder
// still works inside its section.
const (
	// PGIdleTimeoutsName is one PostgreSQL ending sessions idle for 500ms,
	// in a transaction (idle_in_transaction_session_timeout) or outside
	// one (idle_session_timeout, PostgreSQL 14 and later).
	PGIdleTimeoutsName = "pg-idle-timeouts"
	// MySQLWaitTimeoutName is one MariaDB ending sessions idle for one
	// second (wait_timeout, in whole seconds: its least).
	MySQLWaitTimeoutName = "mysql-wait-timeout"
)

// PGIdleTimeout is the idle time after which pg-idle-timeouts' server ends
// a session under the fast profile: longer than the lab's locks' watcher
// interval at the matrix's TTL (a third of 1s), so a live holder's watcher
// keeps its session busy, and shorter than any pause or stall past the
// TTL. Its length is the profile's (Profile.Timeouts; 10 s under
// production, Profile.Apply).
var PGIdleTimeout = Fast.Timeouts["idle_session_timeout"]

func init() {
	Register(Named{
		Name: PGIdleTimeoutsName,
		Summary: "one PostgreSQL that ends a session idle for " + PGIdleTimeout + " (idle_in_transaction_session_timeout and " +
			"idle_session_timeout), as production servers are configured against forgotten transactions and leaked connections",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{Postgres},
		Alone:          "a live holder keeps its session only as long as its watcher, every third of a TTL, comes within " + PGIdleTimeout + ": late by 167 ms under another cell's load, it loses the session",
		Declare: func(need Need) (Declaration, error) {
			return timedOut(need, Postgres, map[string]string{
				"idle_in_transaction_session_timeout": PGIdleTimeout,
				"idle_session_timeout":                PGIdleTimeout,
			})
		},
	})
	Register(Named{
		Name: MySQLWaitTimeoutName,
		Summary: "one MySQL (MariaDB) that ends a session idle for one second (wait_timeout=1, its least), as production " +
			"servers are configured against leaked connections",
		SameRequestsAs: SingleName,
		Kinds:          []Kind{MySQL},
		Alone:          "a live holder keeps its session only as long as its watcher, every third of a TTL, comes within wait_timeout's second, as on pg-idle-timeouts",
		Declare: func(need Need) (Declaration, error) {
			return timedOut(need, MySQL, map[string]string{"wait_timeout": Fast.Timeouts["wait_timeout"]})
		},
	})
}

// timedOut declares one server of kind with settings.
func timedOut(need Need, kind Kind, settings map[string]string) (Declaration, error) {
	d, err := one(need, kind)
	if err != nil {
		return d, err
	}
	d.Groups[0].Settings = settings
	return d, nil
}

// one declares the single server of kind a lock of need runs on.
func one(need Need, kind Kind) (Declaration, error) {
	if need.Kind != kind {
		return Declaration{}, fmt.Errorf("the topology carries %s locks, not %s ones", kind, need.Kind)
	}
	if need.Count() != 1 {
		return Declaration{}, fmt.Errorf("the topology has one %s server, and the lock asks for %d", kind, need.Count())
	}
	return Of(Single(kind)), nil
}
