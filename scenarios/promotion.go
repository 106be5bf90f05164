package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// The database replica topologies' cells (PostgreSQL's streaming replica,
// MySQL's binary-log replica): plain contention (through the primary, with
// every commit replicated) and the fail-over by promotion while the holder
// is inside its section. One scenario for both kinds, so its text names
// each kind's promotion. Its runs are judged by what the promotion lost
// (checker.RiskAtPromotion): the primary's write position at the kill
// against the replica's own at its promotion, which the fault records; a
// replica that had everything took nothing from the holder's claim.
func init() {
	Register(alone(promotionWhy, onTopologies(scheduleScenario(nemesis.PrimaryFailover, checker.RiskAtPromotion,
		"once the replica has applied what the primary had when the clients were built (the lock's table), "+
			"the database primary is SIGKILLed while the holder is inside its section, its replica is promoted "+
			"(PostgreSQL: pg_promote; MySQL: the relay log applied, then STOP SLAVE, RESET SLAVE ALL, read_only off) "+
			"and the primary's address moves to the replica's host; the holder goes on once another client has had "+
			"the lock (or half a TTL passed; for a lock with no expiry, 2 s, longer than a client takes to reconnect), then writes",
		nil), topology.PGReplicaAsyncName, topology.PGReplicaSyncName, topology.MySQLReplicaAsyncName, topology.MySQLReplicaSemisyncName)))
	extend("contention", topology.PGReplicaAsyncName, topology.PGReplicaSyncName, topology.MySQLReplicaAsyncName, topology.MySQLReplicaSemisyncName)
}
