package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/topology"
)

// The Redis Cluster topology's cells: plain contention and a crashed
// holder (the same meaning as on one server, through the cluster client),
// and the fail-overs the cluster itself decides: the lock key's slot
// master cut off with the holder, and that master killed.
func init() {
	Register(onTopologies(scheduleScenario("cluster-master-split", checker.RiskAtStrike,
		"on a Redis Cluster, the master of the lock key's slot while the holder is in its section is cut off, with the holder, "+
			"from the other members and clients, past the node timeout; the cluster promotes its replica, the old master refuses "+
			"commands once it sees it is in a minority, and the others are granted by the new one while the holder works on",
		nil), topology.RedisClusterName))
	Register(onTopologies(scheduleScenario("cluster-master-kill", checker.RiskAtPromotion,
		"on a Redis Cluster, the master of the lock key's slot is SIGKILLed while the holder is in its section; the cluster "+
			"promotes its replica, which has the holder's grant only if replication had carried it there",
		nil), topology.RedisClusterName))
	for _, name := range []string{"contention", "holder-crash"} {
		extend(name, topology.RedisClusterName)
	}
}
