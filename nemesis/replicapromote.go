package nemesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// ReplicaPromote is a single Redis master replaced by its replica through
// the in-process proxy: the replica's replication is stalled (SIGSTOP)
// before any client is granted the lock, so a grant certainly never
// reaches it; at the fault the master is SIGKILLed, the replica resumed
// and promoted (REPLICAOF NO ONE), and every client's proxy to the master
// retargeted to it (what a proxy or a virtual address does in production).
// Unlike FailOver it needs no hosts of the lab's own, so it reaches
// container mode too; and the grant is lost for certain, not only when
// replication lagged. The heal only records: the old master stays dead,
// so it is a schedule's last fault.
const ReplicaPromote = "replica-promote"

func init() { register(replicaPromote{}) }

type replicaPromote struct{}

func (replicaPromote) Name() string     { return ReplicaPromote }
func (replicaPromote) ThroughProxy()    {}
func (replicaPromote) PromotesReplica() {}

// Shape: the replica the fault promotes, which the lock alone does not
// declare.
func (replicaPromote) Shape(d topology.Declaration) topology.Declaration {
	if lock := d.Names(topology.Lock); len(lock) > 0 {
		d = d.Merge(topology.Of(topology.ReplicaOf(lock[0])))
	}
	return d
}

func (replicaPromote) Applies(spec impls.Spec, topo Topology) error {
	if _, ok := scriptedFailover(spec.Backend.Kind); !ok || spec.Backend.Nodes > 1 || spec.Backend.InProcess || topo.Ensemble {
		return fmt.Errorf("a promotion replaces a single Redis server by its replica, and %s does not run on one", spec.Name)
	}
	if !topo.Replica {
		return errors.New("the topology has no replica to promote (only a schedule, or an exploration, that names replica-promote starts one)")
	}
	return nil
}

func (replicaPromote) Targets(topo Topology) []string { return failOver{}.Targets(topo) }

// Settle stalls the replica before any grant: replication is
// asynchronous, and a stalled replica makes certain the holder's grant is
// among the writes the promotion loses.
func (replicaPromote) Settle(ctx context.Context, sys System, target string) (string, error) {
	replica, err := sys.Server(ReplicaName)
	if err != nil {
		return "", err
	}
	if err := replica.Pause(); err != nil {
		return "", fmt.Errorf("SIGSTOP %s: %w", ReplicaName, err)
	}
	return "SIGSTOP " + ReplicaName + ": replication stalls", nil
}

func (replicaPromote) Inject(ctx context.Context, sys System, target string) (string, error) {
	master, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	replica, err := sys.Server(ReplicaName)
	if err != nil {
		return "", err
	}
	p, ok := sys.(Proxies)
	if !ok {
		return "", errors.New("the run's clients do not dial through the proxy")
	}
	links, err := p.Links(-1, target)
	if err != nil {
		return "", err
	}
	markStrike(ctx, master, []*cluster.Node{replica})
	if err := master.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", target, err)
	}
	if err := replica.Resume(); err != nil {
		return "", fmt.Errorf("SIGCONT %s: %w", ReplicaName, err)
	}
	promoter, ok := scriptedFailover(master.Kind)
	if !ok {
		return "", fmt.Errorf("promotion: the lab cannot promote a %s replica by script", master.Kind.Title())
	}
	if err := promoter.PromoteReplica(ctx, replica); err != nil {
		return "", err
	}
	// Read from the promoted replica, not assumed from the stall: a
	// stalled process's socket still takes in what its master sends, up
	// to the kernel's buffer, and the replica reads it when resumed.
	markPromoted(ctx, master, replica)
	for _, l := range links {
		if err := l.Retarget(replica.Name, replica.Addr); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("SIGKILL %s; %s resumed and promoted (REPLICAOF NO ONE); clients' proxies retargeted to it", target, replica.Name), nil
}

func (replicaPromote) Heal(ctx context.Context, sys System, target string) (string, error) {
	return "old master stays down; clients stay on the promoted replica", nil
}
