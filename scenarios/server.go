package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

func init() {
	Register(alone(scheduleScenario("server-restart", checker.RiskAtStrike,
		"the single Redis lock server is SIGKILLed and restarted without its data while a client holds the lock",
		singleRedis)))

	// The grant never reaches the replica (the engine's script stalls it
	// first), and the clients move to the promoted replica through the
	// in-process proxy, which works in container mode too.
	Register(alone(workerScenario("redis-failover", checker.RiskAtStrike,
		"the grant never reaches the replica; the master dies; the replica is promoted and clients move to it",
		singleRedis, withReplica, "redis-failover")))
}

// withReplica is the lock's single Redis with a replica to fail over to.
func withReplica(spec impls.Spec, _ string) topology.Declaration {
	d := spec.Backend.Topology()
	return d.Merge(topology.Of(topology.ReplicaOf(d.Names(topology.Lock)[0])))
}
