package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// redisFailover runs two clients, the victim and the one the lost lock is
// granted to, and the victim leaves after its stale section, as the fixed
// server-restart schedule does (nemesis.serverShape says why). It stalls
// the replica before the victim's grant, so that the grant is certainly
// among the writes the fail-over loses. It stays scripted, moving the
// clients to the replica through the in-process proxy, because that works
// in container mode too: the nemesis's fail-over moves the master's
// address between the lab's hosts, and container mode has none. The fixed
// redis-failover-replicated lets replication run and is usually safe.
var redisFailover = Script{
	Workers: 2, Proxies: true,
	Setup: func(ctx context.Context, r *ScriptRun) error {
		// Replication is asynchronous; stalling the replica makes
		// certain that the holder's grant is among the writes lost.
		r.Env.FaultAt(lin.Injection{Kind: nemesis.ServerPause, Target: nemesis.ReplicaName,
			Servers: []string{nemesis.ReplicaName}, Note: "SIGSTOP: replication stalls"})
		return r.Env.Topo.Replica.Pause()
	},
	Trigger: inSection,
	Inject:  failOverToReplica,
	Observe: func(*Env) time.Duration { return time.Second },
}

// failOverToReplica kills the master, promotes the stalled replica and
// moves every client's proxy to it, then lets the victim go on and leave
// once another client has read the resource.
func failOverToReplica(ctx context.Context, r *ScriptRun) error {
	master, replica := r.lockNodes()[0], r.Env.Topo.Replica
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
	r.Env.FaultAt(lin.Injection{Kind: ReplicaPromote, Target: replica.Name,
		Servers: []string{replica.Name}, Note: "REPLICAOF NO ONE"})
	for _, l := range r.Net.Links(-1, master.Name) {
		if err := l.Retarget(replica.Name, replica.Addr); err != nil {
			return err
		}
	}
	r.Env.FaultAt(lin.Injection{Kind: ProxyRetarget, Target: master.Name,
		Servers: []string{master.Name, replica.Name}, Note: "clients move to " + replica.Name})
	return r.HandOff(ctx, r.Victim.ContinueThenLeave)
}
