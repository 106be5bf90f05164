package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
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
	Register(scheduleScenario("server-restart",
		"the single Redis lock server is SIGKILLed and restarted without its data while a client holds the lock",
		singleRedis))

	Register(workerScenario("redis-failover",
		"the grant never reaches the replica; the master dies; the replica is promoted and clients move to it",
		singleRedis, func(impls.Spec) cluster.Needs { return cluster.Needs{Replica: true} }, plan{
			workers: 2, proxies: true,
			setup: func(ctx context.Context, r *faultRun) error {
				// Replication is asynchronous; stalling the replica makes
				// certain that the holder's grant is among the writes lost.
				r.env.FaultAt("SIGSTOP redis-replica: replication stalls")
				return r.env.Topo.Replica.Pause()
			},
			trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
			inject: func(ctx context.Context, r *faultRun) error {
				master, replica := r.env.Topo.Redis[0], r.env.Topo.Replica
				r.env.FaultAt("SIGKILL " + master.Name + " (master)")
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
				r.env.FaultAt("promote redis-replica to master")
				for _, l := range r.net.Links(-1, master.Name) {
					if err := l.Retarget(replica.Name, replica.Addr); err != nil {
						return err
					}
				}
				r.env.FaultAt("clients move to redis-replica")
				return r.handOff(ctx, r.victim.ContinueThenLeave)
			},
			observe: func(*Env) time.Duration { return time.Second },
		}))
}
