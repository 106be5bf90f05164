package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// The database replica that acknowledged, lost with its primary
// (nemesis/acked_standby.go): on the two-replica topologies, the stream to
// the replica the lab promotes is held back from before the first grant,
// so the other acknowledges every commit; both it and the primary die
// while the holder is inside its section, and the one behind is promoted.
// Judged by what the promotion lost (checker.RiskAtPromotion), as
// primary-failover is, and alone for the same reason.
func init() {
	Register(alone(promotionWhy, onTopologies(scheduleScenario(nemesis.PrimaryAckedStandbyLost, checker.RiskAtPromotion,
		"once both replicas have applied what the primary had when the clients were built, the primary's stream (WAL, binary log) "+
			"to the replica the lab promotes (postgres-replica, mysql-replica) is held back 5 s, so every commit of the run is "+
			"acknowledged by the other (-2) alone (PostgreSQL's ANY 1 quorum, MariaDB's semi-sync); the primary and the replica that "+
			"acknowledged are SIGKILLed together while the holder is inside its section, the held-back replica is promoted with what it "+
			"had (the record shows the primary's and both replicas' positions at the kill) and the primary's address moved to it; the "+
			"holder goes on as in primary-failover",
		nil), topology.PGReplicaSync2Name, topology.MySQLReplicaSemisync2Name)))
}
