package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// The database replica that acknowledged, lost with its primary.
// PostgreSQL's quorum commit (synchronous_standby_names ANY 1) and
// MariaDB's semi-synchronous replication return a commit once one replica
// has it, not a chosen one, as Redis's WAIT 1 does; a fail-over that
// loses that replica with the primary (one rack, one zone) promotes
// another that may never have received the commit. The operator's tools
// would promote the most advanced survivor, and here the only survivor
// is behind: what the primary confirmed to a client is gone.
//
// Run on the topologies with two replicas (pg-replica-sync-2,
// mysql-replica-semisync-2): the replica the lab promotes (B,
// cluster.Promoter's PromotedReplica) and a second one (A).
const (
	// AckedStandbyLost: settled as primary-promotion (both replicas
	// replay what the clients' build wrote), then the primary's stream to
	// B is held back LagBehind, so every commit of the run is
	// acknowledged by A alone. When it strikes, the primary's, A's and
	// B's positions are read, the primary and A are SIGKILLed together,
	// B is promoted with what it had (its stream still held, so nothing
	// the dead primary's kernel sends again reaches it sooner), then the
	// packets still held are dropped and the primary's address moved to
	// B. The old primary and A
	// stay dead: a schedule's last fault.
	AckedStandbyLost = "acked-standby-lost"
	// PrimaryAckedStandbyLost is the fixed schedule (and matrix scenario)
	// that strikes AckedStandbyLost while the holder is inside its section.
	PrimaryAckedStandbyLost = "primary-acked-standby-lost"
)

func init() {
	register(ackedStandbyLost{})
	// primary-failover's step (the holder going on once another client
	// has had the lock, or a bound passed), the lost acknowledger the one
	// difference.
	fixedAs(PrimaryAckedStandbyLost, promotionInSection(AckedStandbyLost))
}

// ackedStandbyLost is a primaryPromotion (its targets, its hosts, its
// clients' reconnection) that also loses the acknowledging replica.
type ackedStandbyLost struct{ primaryPromotion }

func (ackedStandbyLost) Name() string { return AckedStandbyLost }

// PromotesReplica: the old primary and the replica that acknowledged stay
// dead, so a drawn schedule ends with it (Validate; Generate stops there).
func (ackedStandbyLost) PromotesReplica() {}

// Applies: where primary-promotion does, on a topology that declares a
// second replica of the primary, with the lab's packet queue to hold a
// stream and a kind that reports replication positions.
func (k ackedStandbyLost) Applies(spec impls.Spec, topo Topology) error {
	if err := k.primaryPromotion.Applies(spec, topo); err != nil {
		return err
	}
	promoter, _ := promoterOf(spec.Backend.Kind)
	named, err := topology.Lookup(topo.Name)
	if err != nil {
		return err
	}
	decl, err := spec.Backend.On(named)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(decl.Nodes(), func(n topology.Node) bool {
		return n.Role == topology.Replica && n.Name != promoter.PromotedReplica()
	}) {
		return fmt.Errorf("it loses the replica that acknowledged with the primary and promotes another, and the %s topology "+
			"declares one replica (the two-replica ones: %s, %s)", topology.Or(topo.Name), topology.PGReplicaSync2Name, topology.MySQLReplicaSemisync2Name)
	}
	if err := netfault.DelayAvailable(); err != nil {
		return err
	}
	if kind, err := cluster.KindOf(spec.Backend.Kind); err == nil {
		if _, ok := kind.(cluster.BehindReporter); !ok {
			return fmt.Errorf("the lab cannot read how far a %s replica is behind", spec.Backend.Kind)
		}
	}
	return nil
}

// standbys are the primary target's two replicas: acks, the one lost with
// it, and promoted, the one the lab promotes, held back.
func standbys(sys System, target string) (primary, acks, promoted *cluster.Node, promoter cluster.Promoter, err error) {
	primary, promoted, promoter, err = promotionPair(sys, target)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for _, name := range sys.LockServers() {
		n, err := sys.Server(name)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if n.Kind == primary.Kind && n != primary && n != promoted {
			acks = n
			break
		}
	}
	if acks == nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: %s has no replica besides %s to acknowledge its commits", AckedStandbyLost, primary.Name, promoted.Name)
	}
	if primary.Host == nil || promoted.Host == nil {
		return nil, nil, nil, nil, errors.New("acked standby lost: the primary and its replicas must run on hosts of their own")
	}
	return primary, acks, promoted, promoter, nil
}

// Settle waits for both replicas to replay what the clients' build wrote,
// then holds the primary's stream back from the one to be promoted: from
// then on every commit is acknowledged by the other alone.
func (k ackedStandbyLost) Settle(ctx context.Context, sys System, target string) (string, error) {
	primary, acks, promoted, promoter, err := standbys(sys, target)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, r := range []*cluster.Node{acks, promoted} {
		note, err := promoter.CatchUp(ctx, primary, r, catchUpBound)
		if err != nil {
			return "", err
		}
		notes = append(notes, note)
	}
	_, port, err := splitPort(primary.Addr)
	if err != nil {
		return "", err
	}
	if err := netfault.DelayFromPort(ctx, promoted.Host, []*hosts.Host{primary.Host}, port, LagBehind, 0); err != nil {
		healLag(context.WithoutCancel(ctx), sys)
		return "", fmt.Errorf("hold back %s's stream to %s: %w", primary.Name, promoted.Name, err)
	}
	return fmt.Sprintf("%s; then %s's stream (port %d) to %s held back %v, so %s alone keeps up and acknowledges",
		strings.Join(notes, "; "), primary.Name, port, promoted.Name, LagBehind, acks.Name), nil
}

// Inject records where the primary and each replica are, SIGKILLs the
// primary and the replica that kept up, promotes the other, drops what
// the dead primary sent that is still held, and moves the primary's
// address to the promoted one.
func (k ackedStandbyLost) Inject(ctx context.Context, sys System, target string) (string, error) {
	primary, acks, promoted, promoter, err := standbys(sys, target)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range []*cluster.Node{acks, promoted} {
		behind, err := cluster.Behind(ctx, primary, r)
		if err != nil {
			fmt.Fprintf(&b, "%s unread: %v; ", r.Name, err)
			continue
		}
		b.WriteString(behind + "; ")
	}
	markStrike(ctx, primary, []*cluster.Node{promoted})
	for _, n := range []*cluster.Node{primary, acks} {
		if err := n.Kill(); err != nil {
			return "", fmt.Errorf("SIGKILL %s: %w", n.Name, err)
		}
	}
	// The hold stays on until the promotion has ended the replica's
	// replication: a SIGKILLed server's kernel still holds the socket's
	// unacknowledged data and sends it again, and with the hold lifted
	// first, a resent packet reached the replica before pg_promote
	// stopped its WAL receiver (seen in an explore run: the promoted
	// replica received the holder's grant after the kill). Held, it
	// arrives only LagBehind after it was sent, as the lag says.
	start := time.Now()
	if err := promoter.Promote(ctx, promoted); err != nil {
		return "", err
	}
	took := time.Since(start).Round(time.Millisecond)
	markPromoted(ctx, primary, promoted)
	// What is still held belongs to a connection the promotion ended.
	if err := dropLag(ctx, sys); err != nil {
		return "", err
	}
	if err := moveAddress(ctx, primary, promoted); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "SIGKILL %s and %s; %s promoted in %v, its stream still held; then what was held dropped; %s now answers on %s's host",
		primary.Name, acks.Name, promoted.Name, took, primary.Addr, promoted.Name)
	return b.String(), nil
}

func (ackedStandbyLost) Heal(context.Context, System, string) (string, error) {
	return "old primary and the replica that acknowledged stay down; clients stay on the promoted replica", nil
}
