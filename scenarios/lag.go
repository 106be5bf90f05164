package scenarios

import (
	"errors"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// The fail-over under replication lag (nemesis/lag.go): on the Sentinel
// topologies and on Redis Cluster, the master's replication stream is held
// back from its replicas from before the first grant, and the master is
// killed while the holder is inside its section, as in sentinel-master-kill
// and cluster-master-kill; the replica promoted never received the
// holder's grant nor its fencing token.
func init() {
	Register(onTopologies(scheduleScenario(nemesis.MasterKillUnderLag, checker.RiskAtPromotion,
		"the master's replication stream is held back 5 s from its replicas (the lab's hosts' packet queue, on the master's port) "+
			"from before the first grant; the master is SIGKILLed while the holder is inside its section, and its group "+
			"(Sentinel, or the Redis Cluster) promotes a replica that never received the holder's grant nor its fencing token; "+
			"the holder goes on inside the fault once another client has read the resource; "+
			"the record shows the master's and each replica's replication offsets at the kill",
		grantsUnderLag), append(append([]string{}, topology.SentinelTopologies...), topology.RedisClusterName)...))
}

// grantsUnderLag refuses a lock that confirms every grant with a replica
// (impls.Backend.Replicas): its WAIT times out long before a held-back
// stream arrives, so it gives every grant back and no holder ever stands
// inside its section for the kill to strike. Under lag such a lock grants
// nothing, which is a matter of its liveness, not of this fail-over.
func grantsUnderLag(spec impls.Spec, _ bool) error {
	if spec.Backend.Replicas {
		return errors.New("the lock confirms every grant with a replica (WAIT), which a lagging replica never does in time: " +
			"every grant is given back and no holder is inside its section when the master dies")
	}
	return nil
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
