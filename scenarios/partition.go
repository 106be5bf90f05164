package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// holderPartition applies to locks on one lock server the lab can put on a
// host: PostgreSQL, ZooKeeper, or a single Redis node. Redlock's partitions
// are redlock-partition's.
func holderPartition(spec impls.Spec, _ bool) error {
	if err := hosts.Available(); err != nil {
		return err
	}
	b := spec.Backend
	if b.Postgres || b.ZooKeeper || b.RedisNodes == 1 {
		return nil
	}
	return errors.New("it cuts the holder off the one server its lock lives on (PostgreSQL, ZooKeeper or a single Redis)")
}

// lockServers returns the hosts of the servers the lock itself lives on
// (never the resource's).
func lockServers(env *Env) ([]*hosts.Host, []string) {
	var hs []*hosts.Host
	var names []string
	add := func(n *cluster.Node) {
		if n != nil && n.Host != nil {
			hs = append(hs, n.Host)
			names = append(names, n.Name)
		}
	}
	b := env.Impl.Backend
	if b.Postgres {
		add(env.Topo.Postgres)
	}
	if b.ZooKeeper {
		add(env.Topo.ZooKeeper)
	}
	if b.RedisNodes > 0 {
		for _, n := range env.Topo.Redis {
			add(n)
		}
	}
	return hs, names
}

func init() {
	s := workerScenario("holder-partition",
		"the holder, having read the resource, is cut off its lock server by dropped packets (no reset, no closed socket); "+
			"the resource stays reachable; it writes once another client has read, or after the liveness bound",
		holderPartition,
		func(impls.Spec) cluster.Needs { return cluster.Needs{Hosts: true} },
		plan{
			trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
			inject:  partitionHolder,
			// After the heal: long enough for the checker to judge progress.
			observe: func(env *Env) time.Duration { return checker.Bound(env.TTL) + time.Second },
			judge:   judgePartition,
		})
	Register(s)
}

// partitionText starts the fault's text on the timeline.
const partitionText = "partition client "

// judgePartition reports, as figures, when another client first read the
// resource after the cut (-1: never while the cut lasted), and how long the
// cut lasted; the verdict is the checker's.
func judgePartition(r *faultRun, out *Outcome) error {
	var cut *lin.Event
	for i, e := range r.events {
		if e.Kind == lin.Fault && strings.HasPrefix(e.Text, partitionText) {
			cut = &r.events[i]
		}
	}
	if cut == nil {
		return errors.New("holder-partition: the partition is missing from the history")
	}
	out.Figures["partition-ms"] = float64(time.Duration(cut.End - cut.Time).Milliseconds())
	out.Figures["other-read-during-cut-ms"] = -1
	for _, e := range r.events {
		if e.Kind == lin.Read && e.Client != r.victim.ID && e.Time > cut.Time && e.Time < cut.End {
			out.Figures["other-read-during-cut-ms"] = float64(time.Duration(e.Time - cut.Time).Milliseconds())
			break
		}
	}
	return nil
}

// partitionHolder cuts the victim's host off every lock server host, both
// ways, while the victim holds the lock inside its critical section. It
// waits until another client has been granted the lock and has read the
// resource (or the checker's liveness bound passes), lets the victim write,
// keeps the cut for one more TTL so the victim's release meets it too, then
// heals. The whole span is one fault on the timeline.
func partitionHolder(ctx context.Context, r *faultRun) error {
	env := r.env
	if env.Topo.Net == nil {
		return errors.New("holder-partition needs hosts (cluster.Needs.Hosts)")
	}
	victimHost := env.Topo.Net.Host(fmt.Sprintf("client-%d", r.victim.ID))
	servers, names := lockServers(env)
	if victimHost == nil || len(servers) == 0 {
		return errors.New("holder-partition: the victim or the lock server is not on a host")
	}
	text := fmt.Sprintf(partitionText+"%d | %s (packets dropped both ways)", r.victim.ID, strings.Join(names, ","))
	start := lin.Now()
	if err := netfault.Partition(ctx, []*hosts.Host{victimHost}, servers); err != nil {
		return err
	}
	healed := false
	heal := func() error {
		if healed {
			return nil
		}
		healed = true
		err := netfault.HealAll(context.Background(), env.Topo.Net)
		env.Rec.Record(lin.Event{Kind: lin.Fault, Time: start, End: lin.Now(), Text: text})
		return err
	}
	defer heal()
	r.mark()
	r.waitFor(ctx, lin.Read, r.faultTime, checker.Bound(env.TTL))
	if err := r.victim.Continue(); err != nil {
		return err
	}
	select {
	case <-time.After(env.TTL):
	case <-ctx.Done():
		return ctx.Err()
	}
	return heal()
}
