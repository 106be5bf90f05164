package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// PrimaryPromotion is a database fail-over by promotion: the primary is
// SIGKILLed, its replica promoted (PostgreSQL's pg_promote; MySQL's STOP
// SLAVE and RESET SLAVE ALL once its relay log is applied), and
// the primary's address moved to the replica's host, as the Redis
// fail-over moves it (moveAddress), so clients reconnect to the address
// they know and reach the new primary. What lived only in the primary's
// sessions (advisory locks, an open transaction's row locks) is gone, and
// so is a commit that had not reached an asynchronous replica. The old
// primary stays dead: a promotion is a schedule's last fault.
const PrimaryPromotion = "primary-promotion"

// PrimaryFailover is the fixed schedule (and matrix scenario) that fails
// the primary over to its replica while the holder is inside its section.
const PrimaryFailover = "primary-failover"

// promoterOf is kind's server kind when the lab can promote its replica
// (cluster.Promoter), else false.
func promoterOf(kind topology.Kind) (cluster.Promoter, bool) {
	k, err := cluster.KindOf(kind)
	if err != nil {
		return nil, false
	}
	p, ok := k.(cluster.Promoter)
	return p, ok
}

func init() {
	register(primaryPromotion{})
	// The holder, stopped inside its section, goes on once the promotion
	// is done and another client has had the lock (or a bound passed:
	// half a TTL for a lock with a lease, so that its holder writes within
	// it; for one without, reconnectBound, the time the others take to
	// reach the moved address), then writes and leaves, as in
	// server-restart: a lock that survived the fail-over still holds
	// then, and one that did not has been granted to a client that
	// reconnected to the new primary.
	fixedAs(PrimaryFailover, promotionInSection(PrimaryPromotion))
}

// A promotion moves the primary's address to the replica's host.
type primaryPromotion struct{ onOwnHosts }

// reconnectBound is how long after a promotion a live client may take to
// reach the new primary, with room to spare. A client that dials while
// the address moves sends a SYN the old host drops (it no longer owns the
// address); Linux sends it again only after its initial retransmission
// timeout, 1 s, or the client's connect timeout (1 s at the matrix's TTL)
// ends the dial first and the next one gets through at once. In the 18
// runs of bench check primary-failover at the matrix's TTL (both replica
// topologies) in which another client was granted, the first grant came
// 1.15 to 1.18 s after the fault began, about 1.03 s after such a dial
// (at a 2 s TTL alike). Two seconds is that, the connect
// and a grant on a loaded 2-core machine, with room; it is not sized to
// any verdict: a lock that still holds grants nobody in it anyway.
const reconnectBound = 2 * time.Second

func (primaryPromotion) Reconnect() time.Duration { return reconnectBound }

func (primaryPromotion) Name() string { return PrimaryPromotion }

// PromotesReplica: the old primary stays dead, so a promotion ends a
// schedule (laggingPromotion inherits it). Without it, explore drew a
// second primary-promotion after the first, aimed at the dead primary by
// name ("SIGKILL postgres: postgres is not running"), and ended the
// database replica topologies' tables.
func (primaryPromotion) PromotesReplica() {}

// Applies: the lock's kind can promote a replica, the named topology
// declares one, and the address can move between hosts.
func (primaryPromotion) Applies(spec impls.Spec, topo Topology) error {
	promoter, ok := promoterOf(spec.Backend.Kind)
	if !ok || spec.Backend.InProcess {
		return fmt.Errorf("a promotion fails a database primary over to its replica, and %s's servers have none the lab promotes", spec.Name)
	}
	replica := promoter.PromotedReplica()
	named, err := topology.Lookup(topo.Name)
	if err != nil {
		return err
	}
	decl, err := spec.Backend.On(named)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(decl.Nodes(), func(n topology.Node) bool { return n.Name == replica && n.Role == topology.Replica }) {
		return fmt.Errorf("the %s topology declares no replica of the primary to promote", topology.Or(topo.Name))
	}
	if topo.NoHosts != "" {
		return fmt.Errorf("the primary's address moves between hosts of the lab's own: %s", topo.NoHosts)
	}
	return nil
}

func (primaryPromotion) Targets(topo Topology) []string {
	for _, s := range topo.Servers {
		if _, ok := promoterOf(s.Kind); ok {
			return []string{s.Name}
		}
	}
	return nil
}

// catchUpBound bounds the settle's wait for the replica: it replays in
// milliseconds what a run's start wrote, so a longer wait is a replica
// that does not follow.
const catchUpBound = 30 * time.Second

// Settle waits until the replica has replayed all the primary had written
// once the clients were built: the lock's table (each client makes it as
// it is built), which production replicated long before any fail-over.
// What the promotion then can lose is what it means to test: the grants
// made after this, which race replication as in production.
func (primaryPromotion) Settle(ctx context.Context, sys System, target string) (string, error) {
	primary, replica, promoter, err := promotionPair(sys, target)
	if err != nil {
		return "", err
	}
	return promoter.CatchUp(ctx, primary, replica, catchUpBound)
}

// promotionPair finds target's replica and the kind that promotes it.
func promotionPair(sys System, target string) (primary, replica *cluster.Node, promoter cluster.Promoter, err error) {
	if primary, err = sys.Server(target); err != nil {
		return nil, nil, nil, err
	}
	promoter, ok := promoterOf(primary.Kind)
	if !ok {
		return nil, nil, nil, fmt.Errorf("the lab cannot promote a %s replica", primary.Kind.Title())
	}
	if replica, err = sys.Server(promoter.PromotedReplica()); err != nil {
		return nil, nil, nil, err
	}
	return primary, replica, promoter, nil
}

func (primaryPromotion) Inject(ctx context.Context, sys System, target string) (string, error) {
	primary, replica, promoter, err := promotionPair(sys, target)
	if err != nil {
		return "", err
	}
	if primary.Host == nil || replica.Host == nil {
		return "", errors.New("promotion: the primary and its replica must run on hosts of their own")
	}
	markStrike(ctx, primary, []*cluster.Node{replica})
	if err := primary.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", target, err)
	}
	// How long the promotion takes is part of the fail-over's window
	// (MySQL's applies the relay log first), so the note says.
	start := time.Now()
	if err := promoter.Promote(ctx, replica); err != nil {
		return "", err
	}
	took := time.Since(start).Round(time.Millisecond)
	markPromoted(ctx, primary, replica)
	if err := moveAddress(ctx, primary, replica); err != nil {
		return "", err
	}
	return fmt.Sprintf("SIGKILL %s; %s promoted in %v; %s now answers on %s's host", target, replica.Name, took, primary.Addr, replica.Name), nil
}

func (primaryPromotion) Heal(context.Context, System, string) (string, error) {
	return "old primary stays down; clients stay on the promoted replica", nil
}
