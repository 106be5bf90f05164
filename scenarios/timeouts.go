package scenarios

import (
	"time"

	"github.com/locklab/locklab/topology"
)

// The session timeouts' cells: the server settings live in the topology
// (topology/timeouts.go), and the scenarios are the single topology's
// stalled and slow holders. A holder stalled past the timeout (a GC pause,
// a stopped process) leaves its session idle, and the server ends it with
// the lock it carries; a holder that works on, alive, past the TTL keeps
// its session busy only if its lock talks to the server while it works.
func init() {
	for _, name := range []string{"pause-past-ttl", "slow-work-past-ttl"} {
		extend(name, topology.PGIdleTimeoutsName, topology.MySQLWaitTimeoutName)
	}
}

// SessionIdle is how long a session sits idle before the named topology's
// server ends it under profile, and with it a lock bound to the session
// (0: never, as far as the lab sets). It is such a lock's lease there: the
// danger window of a stalled holder opens when its session has been idle
// that long (checker.Claim.Lease).
func SessionIdle(topo string, profile topology.Profile) time.Duration {
	switch topology.Or(topo) {
	case topology.PGIdleTimeoutsName:
		return timeoutSetting(profile, "idle_session_timeout", time.ParseDuration)
	case topology.MySQLWaitTimeoutName:
		// wait_timeout is in whole seconds.
		return timeoutSetting(profile, "wait_timeout", func(s string) (time.Duration, error) { return time.ParseDuration(s + "s") })
	}
	return 0
}

// timeoutSetting reads the profile's timeout called name with parse; the
// profiles are data in this binary, so a value that does not parse is a
// programming error any test run finds.
func timeoutSetting(profile topology.Profile, name string, parse func(string) (time.Duration, error)) time.Duration {
	d, err := parse(profile.Timeouts[name])
	if err != nil {
		panic("scenarios: the " + profile.Name + " profile's " + name + ": " + err.Error())
	}
	return d
}
