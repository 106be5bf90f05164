package scenarios

import "github.com/locklab/locklab/topology"

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
