package nemesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// A database fail-over under replication lag: primary-promotion with the
// primary's stream (PostgreSQL's WAL, MySQL's binary log) held back from
// its replica by LagBehind from the settle on, so the promotion finds the
// replica without anything the clients wrote since. On one machine an
// asynchronous replica is milliseconds behind (MariaDB's dump thread
// sends a commit at once), and the lab's promotions kept grants a
// production replica seconds behind would lose.
const (
	// LaggingPromotion is primary-promotion under lag: settled as it
	// (the replica replays what the clients' build wrote), then the
	// primary's stream is held back; when it strikes, the positions are
	// read and recorded, the primary is SIGKILLed and the replica
	// promoted with what it had.
	LaggingPromotion = "lagging-promotion"
	// PromotionUnderLag is the fixed schedule (and matrix scenario) that
	// strikes LaggingPromotion while the holder is inside its section.
	PromotionUnderLag = "promotion-under-lag"
)

func init() {
	register(laggingPromotion{})
	// primary-failover's step, the lag the one difference.
	fixedAs(PromotionUnderLag, promotionInSection(LaggingPromotion))
}

// laggingPromotion is a primaryPromotion (its targets, its hosts, its
// clients' reconnection) whose settle also starts the lag.
type laggingPromotion struct{ primaryPromotion }

func (laggingPromotion) Name() string { return LaggingPromotion }

func (k laggingPromotion) Applies(spec impls.Spec, topo Topology) error {
	// A primary that waits for its one replica does not run ahead of it:
	// held back, the stream stalls every commit by the lag (seen: explore's
	// opening on pg-replica-sync and mysql-replica-semisync, "worker 0 did
	// not reach failpoint in-critical-section within 35s"), so no grant is
	// made that the replica lacks, and the promotion this kind is about
	// never finds one. What a stalled commit does is the split-brain and
	// acknowledged-standby kinds' question there.
	if named, err := topology.Lookup(topo.Name); err == nil && named.CommitWaits != "" {
		return fmt.Errorf("the %s primary's commits wait for its one replica (%s): a held-back stream stalls every commit "+
			"rather than leaving the replica behind", named.Name, named.CommitWaits)
	}
	if err := k.primaryPromotion.Applies(spec, topo); err != nil {
		return err
	}
	if err := netfault.DelayAvailable(); err != nil {
		return err
	}
	if _, ok := promoterOf(spec.Backend.Kind); ok {
		if k, err := cluster.KindOf(spec.Backend.Kind); err == nil {
			if _, ok := k.(cluster.BehindReporter); !ok {
				return fmt.Errorf("the lab cannot read how far a %s replica is behind", spec.Backend.Kind)
			}
		}
	}
	return nil
}

// Settle waits for the replica as primary-promotion does, then holds the
// primary's stream back from it: every grant of the run is written on the
// primary alone for LagBehind.
func (k laggingPromotion) Settle(ctx context.Context, sys System, target string) (string, error) {
	settled, err := k.primaryPromotion.Settle(ctx, sys, target)
	if err != nil {
		return "", err
	}
	primary, replica, _, err := promotionPair(sys, target)
	if err != nil {
		return "", err
	}
	if primary.Host == nil || replica.Host == nil {
		return "", errors.New("lagging promotion: the primary and its replica must run on hosts of their own")
	}
	_, port, err := splitPort(primary.Addr)
	if err != nil {
		return "", err
	}
	if err := netfault.DelayFromPort(ctx, replica.Host, []*hosts.Host{primary.Host}, port, LagBehind, 0); err != nil {
		healLag(context.WithoutCancel(ctx), sys)
		return "", fmt.Errorf("hold back %s's stream to %s: %w", primary.Name, replica.Name, err)
	}
	return fmt.Sprintf("%s; then %s's stream (port %d) to %s held back %v", settled, primary.Name, port, replica.Name, LagBehind), nil
}

// Inject records how far the replica is behind, then fails over as
// primary-promotion does.
func (k laggingPromotion) Inject(ctx context.Context, sys System, target string) (string, error) {
	primary, replica, _, err := promotionPair(sys, target)
	if err != nil {
		return "", err
	}
	behind, err := cluster.Behind(ctx, primary, replica)
	if err != nil {
		return "", fmt.Errorf("%s: %w", LaggingPromotion, err)
	}
	done, err := k.primaryPromotion.Inject(ctx, sys, target)
	if err != nil {
		return "", err
	}
	return behind + "; " + done, nil
}

// Heal ends the lag at once, dropping the packets still held (they belong
// to the dead primary's connection, which the promotion closed; waiting
// for them would hold the holder up by the lag, where primary-failover's
// goes on at once), and leaves the promoted replica as primary-promotion
// does.
func (k laggingPromotion) Heal(ctx context.Context, sys System, target string) (string, error) {
	if err := dropLag(ctx, sys); err != nil {
		return "", err
	}
	done, err := k.primaryPromotion.Heal(ctx, sys, target)
	return "lag ended, the dead primary's packets still held dropped; " + done, err
}
