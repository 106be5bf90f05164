package scenarios

import (
	"context"
	"fmt"
	"time"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/topology"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
)

// redis-failover runs two clients, the victim and the one the lost lock is
// granted to, and the victim leaves after its stale section, as the fixed
// server-restart schedule does (nemesis.serverShape says why). It stalls
// the replica before the victim's grant, so that the grant is certainly
// among the writes the fail-over loses. It stays scripted, moving the
// clients to the replica through the in-process proxy, because that works
// in container mode too: the nemesis's fail-over moves the master's address
// between the lab's hosts, and container mode has none. The fixed
// redis-failover-replicated lets replication run and is usually safe.

func init() {
	Register(alone(scheduleScenario("server-restart",
		"the single Redis lock server is SIGKILLed and restarted without its data while a client holds the lock",
		singleRedis)))

	Register(alone(workerScenario("redis-failover",
		"the grant never reaches the replica; the master dies; the replica is promoted and clients move to it",
		singleRedis, withReplica, engine.Script{
			Workers: 2, Proxies: true,
			Setup: func(ctx context.Context, r *engine.ScriptRun) error {
				// Replication is asynchronous; stalling the replica makes
				// certain that the holder's grant is among the writes lost.
				r.Env.FaultAt(lin.Injection{Kind: nemesis.ServerPause, Target: nemesis.ReplicaName,
					Servers: []string{nemesis.ReplicaName}, Note: "SIGSTOP: replication stalls"})
				return r.Env.Topo.Replica.Pause()
			},
			Trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
			Inject: func(ctx context.Context, r *engine.ScriptRun) error {
				master, replica := r.Env.Topo.Lock(topology.Redis)[0], r.Env.Topo.Replica
				r.Env.FaultAt(lin.Injection{Kind: nemesis.ServerKill, Target: master.Name,
					Servers: []string{master.Name}, Note: "SIGKILL the master"})
				if err := master.Kill(); err != nil {
					return err
				}
				if err := replica.Resume(); err != nil {
					return err
				}
				c := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
				err := c.ReplicaOf(ctx, "NO", "ONE").Err()
				c.Close()
				if err != nil {
					return fmt.Errorf("promote replica: %w", err)
				}
				r.Env.FaultAt(lin.Injection{Kind: engine.ReplicaPromote, Target: replica.Name,
					Servers: []string{replica.Name}, Note: "REPLICAOF NO ONE"})
				for _, l := range r.Net.Links(-1, master.Name) {
					if err := l.Retarget(replica.Name, replica.Addr); err != nil {
						return err
					}
				}
				r.Env.FaultAt(lin.Injection{Kind: engine.ProxyRetarget, Target: master.Name,
					Servers: []string{master.Name, replica.Name}, Note: "clients move to " + replica.Name})
				return r.HandOff(ctx, r.Victim.ContinueThenLeave)
			},
			Observe: func(*engine.Env) time.Duration { return time.Second },
		})))
}

// withReplica is the lock's single Redis with a replica to fail over to.
func withReplica(spec impls.Spec, _ string) topology.Declaration {
	d := spec.Backend.Topology()
	return d.Merge(topology.Of(topology.ReplicaOf(d.Names(topology.Lock)[0])))
}
