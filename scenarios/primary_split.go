package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// Split brain with clients on both sides, on the database replica
// topologies (nemesis/primary_split.go): the primary stays alive and is cut
// off with the holder and one more client, while the lab promotes the
// replica on the other side and re-points the other two clients to it at
// the address every client is configured with. What each side's primary
// does with its clients' commits is the topology's: the asynchronous ones
// commit on both sides; the synchronous standby's and the semi-synchronous
// primary's commits wait for the replica cut off (semi-sync's timeout is
// an hour under the fast profile). The record says until when the old
// primary committed the lab's probe writes, and the figures the grants on
// each side.
func init() {
	Register(alone("the majority side's first grant races its clients' reconnection (a connection to the old primary times out before the re-pointed dial), which another cell's load moves", onTopologies(scheduleScenario(nemesis.PrimarySplitBrain, checker.RiskBothSides,
		"once the replica has the lock's table, a second into the run, the database primary is cut off (alive) together "+
			"with the holder and one more client from its replica and the other two clients, both ways, for 6 s; the lab "+
			"promotes the replica on the other side (PostgreSQL: pg_promote; MySQL: the relay log applied, then STOP SLAVE, "+
			"RESET SLAVE ALL, read_only off) and a DNAT rule on each of that side's client hosts sends the primary's address "+
			"to it, so each side reaches its own primary at the one address the lock is configured with; every client "+
			"contends throughout; the record shows until when the old primary committed the lab's probe writes; the heal "+
			"SIGKILLs the old primary (fencing, late) and moves its address to the promoted replica",
		nil), topology.PGReplicaAsyncName, topology.PGReplicaSyncName, topology.MySQLReplicaAsyncName, topology.MySQLReplicaSemisyncName)))
}
