package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// The replica that acknowledged, lost (nemesis/acked_replica.go): on the
// Sentinel topologies, with a third replica for the run, the master and
// the replica that kept up are SIGKILLed together while the holder is
// inside its section, and Sentinel promotes one of the other two, which
// lagged (held back 5 s: counted, but never acknowledging) or was
// rejoining (down, then restarted behind a held stream: its master did
// not count it) when the holder was granted.
func init() {
	Register(onTopologies(scheduleScenario(nemesis.SentinelAckedReplicaLost, checker.RiskAtStrike,
		"on a Sentinel group given a third replica for the run, the master's replication stream to redis-replica-2 and -3 is held "+
			"back 5 s from before the first grant while redis-replica-1 keeps up, so a WAIT 1 is answered by redis-replica-1; the master and "+
			"redis-replica-1 are SIGKILLed together while the holder is inside its section, and Sentinel promotes redis-replica-2 or -3, "+
			"which never received the holder's grant nor its fencing token, the other becoming its replica; the holder goes on inside the "+
			"fault once another client has read the resource; the record shows each server's offset and the replicas the master counted",
		nil), topology.SentinelTopologies...))
	Register(onTopologies(scheduleScenario(nemesis.SentinelRejoiningReplicaPromoted, checker.RiskAtStrike,
		"on a Sentinel group given a third replica for the run, redis-replica-2 and -3 are SIGKILLed before the first grant and "+
			"restarted empty behind a replication stream held back 5 s, so they are up and seen by every sentinel but their master does "+
			"not count them yet; the holder's grant is acknowledged by redis-replica-1 alone; the master and redis-replica-1 are SIGKILLed "+
			"while the holder is inside its section, and Sentinel promotes redis-replica-2 or -3, which has none of the run's writes, the "+
			"other becoming its replica; the holder goes on inside the fault once another client has read the resource",
		nil), topology.SentinelTopologies...))
}
