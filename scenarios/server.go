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

// The two server scenarios run two clients, the victim and the one the lost
// lock is granted to, and the victim leaves after its stale section. The
// lost fence counter makes the new holder's token equal to the victim's,
// and an equal token passes the resource. Behind redis-del-release's plain
// DEL, though, a third client (or the victim coming back) can be granted
// the freed lock with a higher token and, if it reads before the new holder
// writes, get that colliding write refused: an interleaving that hid the
// repeated token in some runs and not others, more often on a quiet
// machine. With nobody else to come in, the repeated token shows every run.

func init() {
	Register(workerScenario("server-restart",
		"the single Redis lock server restarts without persistence while a client holds the lock",
		singleRedis, nil, plan{
			workers: 2, trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
			inject: func(ctx context.Context, r *faultRun) error {
				n := r.env.Topo.Redis[0]
				r.env.FaultAt(fmt.Sprintf("SIGKILL %s; restart it empty (no persistence)", n.Name))
				// Another client may be granted the lock as soon as the new
				// server answers, before Restart has confirmed it: its read
				// counts from the kill.
				r.mark()
				if err := n.Restart(ctx, false); err != nil {
					return err
				}
				return r.handOffSince(ctx, r.faultTime, r.victim.ContinueThenLeave)
			},
			observe: func(*Env) time.Duration { return time.Second },
		}))

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
