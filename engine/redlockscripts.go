package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/quorum"
)

// The Redlock scripts strike a node of the victim's bare majority while
// the victim is in its section: restarted empty at once, restarted empty
// only after the max TTL, or its clock jumped forward.

// redlockRestart: a node in the holder's bare majority restarts empty at
// once.
var redlockRestart = Script{
	Proxies: true, Setup: isolateVictim, Trigger: inSection,
	Inject: func(ctx context.Context, r *ScriptRun) error {
		n := pivot(r)
		r.Env.FaultAt(lin.Injection{Kind: nemesis.ServerRestartEmpty, Target: n.Name,
			Servers: []string{n.Name}, Note: "SIGKILL; restarted empty at once"})
		if err := n.Restart(ctx, false); err != nil {
			return err
		}
		return r.HandOff(ctx, r.Victim.Continue)
	},
	Observe: func(*Env) time.Duration { return time.Second },
}

// redlockRestartDelayed: a node in the holder's bare majority crashes and
// restarts empty only after the max TTL (antirez's delayed restart).
var redlockRestartDelayed = Script{
	Proxies: true, Setup: isolateVictim, Trigger: inSection,
	Inject: func(ctx context.Context, r *ScriptRun) error {
		n := pivot(r)
		r.Env.FaultAt(lin.Injection{Kind: nemesis.ServerKill, Target: n.Name,
			Servers: []string{n.Name}, Note: "SIGKILL; it stays down past the max TTL"})
		if err := n.Kill(); err != nil {
			return err
		}
		down := time.Now()
		// No one can be granted a majority now; the victim goes on
		// after the same short hand-off wait as in redlock-restart.
		if err := r.HandOffWithinLease(ctx, r.Victim.Continue); err != nil {
			return err
		}
		time.Sleep(time.Until(down.Add(r.Env.TTL*3/2 + 200*time.Millisecond)))
		r.Env.FaultAt(lin.Injection{Kind: ServerStartEmpty, Target: n.Name,
			Servers: []string{n.Name}, Note: "restarted without its data"})
		return n.Restart(ctx, false)
	},
	Observe: func(*Env) time.Duration { return time.Second },
}

// redlockClockJump: the clock of a node in the holder's bare majority
// jumps forward past the TTL (the scenario declares the movable clock).
var redlockClockJump = Script{
	Proxies: true, Setup: isolateVictim, Trigger: inSection,
	Inject: func(ctx context.Context, r *ScriptRun) error {
		n := pivot(r)
		jump := 2 * r.Env.TTL
		r.Env.FaultAt(lin.Injection{Kind: nemesis.ServerClockJump, Target: n.Name,
			Servers: []string{n.Name}, Note: fmt.Sprintf("its clock jumps %v forward", jump)})
		if err := n.JumpClock(jump); err != nil {
			return err
		}
		return r.HandOff(ctx, r.Victim.Continue)
	},
	Observe: func(*Env) time.Duration { return time.Second },
}

// inSection arms the victim inside its critical section.
func inSection(impls.Spec) string { return failpoint.InCriticalSection }

// isolateVictim cuts the victim off the nodes beyond the first quorum, so
// that its grant lands on exactly a bare majority (Kleppmann's setting:
// "client 1 acquires the lock on nodes A, B, C; D and E are unreachable").
//
// The cut is the in-process proxy's: the victim's connections to those
// nodes are refused at once (a reset, not lost packets). These scripts
// stay on the proxy because every client dials the proxy, never the node
// itself: on the lab's hosts the others dial the restarted node directly,
// enough refused dials trip go-redis's dial circuit breaker (after
// PoolSize failures it probes once a second), and with a one-second TTL
// nobody reached the restarted node before the holder's keys expired, so
// the run showed nothing about the restart.
func isolateVictim(ctx context.Context, r *ScriptRun) error {
	nodes := r.lockNodes()
	for _, n := range nodes[quorum.Majority(len(nodes)):] {
		links := r.Net.Links(0, n.Name)
		if len(links) == 0 {
			return fmt.Errorf("no link from client 0 to %s to cut", n.Name)
		}
		for _, l := range links {
			l.Cut()
			r.Env.FaultAt(lin.Injection{Kind: ProxyReset, Target: l.String(), Clients: []int{0},
				Servers: []string{n.Name}, Note: "connections refused at once"})
		}
	}
	return nil
}

// pivot is the node of the victim's bare majority that the fault hits.
func pivot(r *ScriptRun) *cluster.Node {
	nodes := r.lockNodes()
	return nodes[quorum.Majority(len(nodes))-1]
}

// lockNodes are the run's lock's own nodes (its declared kind's).
func (r *ScriptRun) lockNodes() []*cluster.Node { return r.Env.Topo.Lock(r.Env.Impl.Backend.Kind) }
