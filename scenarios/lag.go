package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// The fail-over under replication lag (nemesis/lag.go): on the Sentinel
// topologies and on Redis Cluster, the master's replication stream is held
// back from its replicas from before the first grant, and the master is
// killed while the holder is inside its section, as in sentinel-master-kill
// and cluster-master-kill; the replica promoted never received the
// holder's grant nor its fencing token. The kind refuses a lock that
// confirms every grant with a replica (nemesis/lag.go says why).
func init() {
	Register(onTopologies(scheduleScenario(nemesis.MasterKillUnderLag, checker.RiskAtPromotion,
		"the master's replication stream is held back 5 s from its replicas (the lab's hosts' packet queue, on the master's port) "+
			"from before the first grant; the master is SIGKILLed while the holder is inside its section, and its group "+
			"(Sentinel, or the Redis Cluster) promotes a replica that never received the holder's grant nor its fencing token; "+
			"the holder goes on inside the fault once another client has read the resource; "+
			"the record shows the master's and each replica's replication offsets at the kill",
		nil), append(append([]string{}, topology.SentinelTopologies...), topology.RedisClusterName)...))
}

// The database fail-over under lag (nemesis/lag_promotion.go): on the
// asynchronous replica topologies, primary-failover with the primary's
// stream held back from the replica after the settle. Alone, as
// primary-failover: the holder must write within its lease right after
// the lab's own promotion, which another cell's load slows.
func init() {
	Register(alone(promotionWhy, onTopologies(scheduleScenario(nemesis.PromotionUnderLag, checker.RiskAtPromotion,
		"once the replica has applied what the primary had when the clients were built, the primary's stream (WAL, binary log) "+
			"is held back 5 s from the replica; the primary is SIGKILLed while the holder is inside its section, the replica "+
			"promoted with what it had (the record shows the primary's and the replica's positions at the kill) and the "+
			"primary's address moved to it; the holder goes on as in primary-failover",
		nil), topology.PGReplicaAsyncName, topology.MySQLReplicaAsyncName)))
}
