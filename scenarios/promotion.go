package scenarios

import (
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// The PostgreSQL replica topologies' cells: plain contention (through the
// primary, with every commit streamed to the replica) and the fail-over by
// promotion while the holder is inside its section.
func init() {
	Register(onTopologies(scheduleScenario(nemesis.PrimaryFailover,
		"once the replica has replayed what the primary had when the clients were built (the lock's table), "+
			"the PostgreSQL primary is SIGKILLed while the holder is inside its section, its streaming replica is promoted "+
			"(pg_promote) and the primary's address moves to the replica's host; the holder goes on once another client has had "+
			"the lock (or half a TTL passed; for a lock with no expiry, 2 s, longer than a client takes to reconnect), then writes",
		nil), topology.PGReplicaAsyncName, topology.PGReplicaSyncName))
	extend("contention", topology.PGReplicaAsyncName, topology.PGReplicaSyncName)
}
