package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// multiRedis applies to locks over several independent Redis nodes.
func multiRedis(spec impls.Spec, _ bool) error {
	if spec.Backend.RedisNodes < 3 {
		return errors.New("it needs a lock over at least 3 independent Redis nodes")
	}
	return nil
}

// quorumOf returns the majority of n nodes.
func quorumOf(n int) int { return n/2 + 1 }

// isolateVictim cuts the victim off the nodes beyond the first quorum, so
// that its grant lands on exactly a bare majority (Kleppmann's setting:
// "client 1 acquires the lock on nodes A, B, C; D and E are unreachable").
//
// The cut is the in-process proxy's: the victim's connections to those
// nodes are refused at once (a reset, not lost packets). These scenarios
// stay on the proxy because every client dials the proxy, never the node
// itself: on the lab's hosts the others dial the restarted node directly,
// its refused dials trip go-redis's dial circuit breaker (after PoolSize
// failures it probes once a second), and with a one-second TTL nobody
// reaches the restarted node before the holder's keys expire, so the run
// shows nothing about the restart.
func isolateVictim(ctx context.Context, r *faultRun) error {
	nodes := r.env.Topo.Redis
	for _, n := range nodes[quorumOf(len(nodes)):] {
		links := r.net.Links(0, n.Name)
		if len(links) == 0 {
			return fmt.Errorf("no link from client 0 to %s to cut", n.Name)
		}
		for _, l := range links {
			l.Cut()
			r.env.FaultAt("proxy reset " + l.String() + " (connections refused at once)")
		}
	}
	return nil
}

// pivot is the node of the victim's bare majority that the fault hits.
func pivot(r *faultRun) *cluster.Node { return r.env.Topo.Redis[quorumOf(len(r.env.Topo.Redis))-1] }

func init() {
	inCS := func(impls.Spec) string { return failpoint.InCriticalSection }
	Register(workerScenario("redlock-restart",
		"a node in the holder's bare majority restarts empty at once",
		multiRedis, nil, plan{
			proxies: true, setup: isolateVictim, trigger: inCS,
			inject: func(ctx context.Context, r *faultRun) error {
				n := pivot(r)
				r.env.FaultAt(fmt.Sprintf("SIGKILL %s; restart it empty at once", n.Name))
				if err := n.Restart(ctx, false); err != nil {
					return err
				}
				return r.handOff(ctx, r.victim.Continue)
			},
			observe: func(*Env) time.Duration { return time.Second },
		}))

	Register(workerScenario("redlock-restart-delayed",
		"a node in the holder's bare majority crashes and restarts empty only after the max TTL (antirez's delayed restart)",
		multiRedis, nil, plan{
			proxies: true, setup: isolateVictim, trigger: inCS,
			inject: func(ctx context.Context, r *faultRun) error {
				n := pivot(r)
				r.env.FaultAt(fmt.Sprintf("SIGKILL %s; it stays down past the max TTL", n.Name))
				if err := n.Kill(); err != nil {
					return err
				}
				down := time.Now()
				// No one can be granted a majority now; the victim goes on
				// after the same short hand-off wait as in redlock-restart.
				if err := r.handOff(ctx, r.victim.Continue); err != nil {
					return err
				}
				time.Sleep(time.Until(down.Add(r.env.TTL*3/2 + 200*time.Millisecond)))
				r.env.FaultAt(fmt.Sprintf("restart %s empty", n.Name))
				return n.Restart(ctx, false)
			},
			observe: func(*Env) time.Duration { return time.Second },
		}))

	Register(workerScenario("redlock-clock-jump",
		"the clock of a node in the holder's bare majority jumps forward past the TTL",
		multiRedis, func(impls.Spec) cluster.Needs { return cluster.Needs{ClockShift: true} }, plan{
			proxies: true, setup: isolateVictim, trigger: inCS,
			inject: func(ctx context.Context, r *faultRun) error {
				n := pivot(r)
				jump := 2 * r.env.TTL
				r.env.FaultAt(fmt.Sprintf("%s's clock jumps %v forward", n.Name, jump))
				if err := n.JumpClock(jump); err != nil {
					return err
				}
				return r.handOff(ctx, r.victim.Continue)
			},
			observe: func(*Env) time.Duration { return time.Second },
		}))

	Register(workerScenario("redlock-partition",
		"every client is cut off a minority of the nodes by dropped packets (still available), then off a majority (unavailable, never unsafe)",
		redlockPartition, func(impls.Spec) cluster.Needs { return cluster.Needs{Hosts: true} }, plan{
			inject:  partitionClients,
			observe: func(*Env) time.Duration { return time.Second },
			judge: func(r *faultRun, out *Outcome) error {
				var details []string
				for _, p := range r.phases {
					// A grant stamped in the first 200ms may have been sent before the cut.
					g := r.grantsBetween(p.start+int64(200*time.Millisecond), p.end)
					out.Figures["grants-"+p.name] = float64(g)
					details = append(details, fmt.Sprintf("%s: %d grants", p.name, g))
				}
				out.Detail = fmt.Sprint(details)
				return nil
			},
		}))
}

// redlockPartition applies to Redlock's independent nodes when the lab can
// put them and the clients on hosts of their own, where a cut drops
// packets.
func redlockPartition(spec impls.Spec, fencing bool) error {
	if err := multiRedis(spec, fencing); err != nil {
		return err
	}
	return hosts.Available()
}

// partitionClients cuts every client's host off a minority of the lock
// nodes for two seconds, heals, then off a majority, and heals: packets
// dropped both ways by the hosts' firewalls, so a request to a cut node
// times out (never a reset: the client cannot tell a lost request from a
// lost reply, and an acquire or release in flight has an unknown outcome).
// Each cut is a fault on the timeline and a window the checker judges:
// grants must go on through the minority cut, and none may come through
// the majority cut.
func partitionClients(ctx context.Context, r *faultRun) error {
	env := r.env
	if env.Topo.Net == nil {
		return errors.New("redlock-partition needs hosts (cluster.Needs.Hosts)")
	}
	var clients []*hosts.Host
	for _, w := range r.workers {
		h := env.Topo.Net.Host(fmt.Sprintf("client-%d", w.ID))
		if h == nil {
			return fmt.Errorf("client %d is not on a host", w.ID)
		}
		clients = append(clients, h)
	}
	nodes := env.Topo.Redis
	q := quorumOf(len(nodes))
	for _, p := range []struct {
		name string
		cut  []*cluster.Node
	}{{"minority-cut", nodes[q:]}, {"majority-cut", nodes[:q]}} {
		var cut []*hosts.Host
		for _, n := range p.cut {
			if n.Host == nil {
				return fmt.Errorf("%s is not on a host", n.Name)
			}
			cut = append(cut, n.Host)
		}
		start := lin.Now()
		if err := netfault.Partition(ctx, clients, cut); err != nil {
			netfault.HealAll(context.WithoutCancel(ctx), env.Topo.Net)
			return fmt.Errorf("%s: %w", p.name, err)
		}
		// Installing the rules takes a firewall call per client and node,
		// hundreds of ms on a loaded machine: the cut is whole only now.
		cutWhole := lin.Now()
		select {
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
		healStart := lin.Now()
		if err := netfault.HealAll(context.WithoutCancel(ctx), env.Topo.Net); err != nil {
			return fmt.Errorf("heal %s: %w", p.name, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		end := lin.Now()
		env.Rec.Record(lin.Event{Kind: lin.Fault, Time: start, End: end,
			Text: fmt.Sprintf("%s: every client cut off %s (packets dropped both ways)", p.name, names(p.cut))})
		r.phases = append(r.phases, phase{p.name, start, end})
		// The checker judges only while the cut is whole: from its last rule
		// (plus 200ms, for a grant whose replies arrived just before) to the
		// first rule the heal removes. The timeline shows the whole fault.
		w := checker.Window{Name: p.name, Start: cutWhole + int64(200*time.Millisecond), End: healStart}
		if p.name == "majority-cut" {
			env.QuorumLoss = append(env.QuorumLoss, w)
		} else {
			env.Available = append(env.Available, w)
		}
	}
	return nil
}

func names(nodes []*cluster.Node) string {
	s := ""
	for i, n := range nodes {
		if i > 0 {
			s += ", "
		}
		s += n.Name
	}
	return s
}
