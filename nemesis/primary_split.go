package nemesis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
)

// PrimarySplitWithClients is a database fail-over in a split brain: the
// primary (alive, never killed while the split holds) is cut off, both
// ways, packets dropped, together with the holder and at least one more
// client, from its replica and the other clients; the lab promotes the
// replica on the other side (PostgreSQL's pg_promote; MySQL's relay log
// applied, then STOP SLAVE, RESET SLAVE ALL, read_only off, as
// primary-promotion does) and re-points that side's clients: on each of
// their hosts a DNAT rule sends the primary's address (the one every
// client is configured with) to the promoted replica, as a virtual
// address or a DNS name moved by a fail-over tool reaches only the clients
// that can see it. The old side's clients keep the old primary at that
// same address. Its target is a Link from the holder to the primary (the
// engine makes it from whichever client holds the lock when it strikes,
// as for split-brain-with-clients), and the old side's other clients
// follow the holder's slot (SplitClients).
//
// While it holds, the lab (whose vantage point no cut reaches) commits a
// probe write on the old primary, one at a time, so the record says until
// when the old primary committed writes and from when a commit waited (a
// synchronous standby's, a semi-synchronous acknowledgement's wait for the
// replica cut off). The heal is the fencing that ends a split brain, late:
// the old primary is SIGKILLed and its address moved to the promoted
// replica's host (as primary-promotion moves it) and the partition
// removed, so the old side's clients reconnect to the new primary (the
// majority's re-pointing rules stay, pointing where the address now
// lives: healSplit says why). The old primary stays dead: it is a schedule's last
// fault.
const PrimarySplitWithClients = "primary-split-with-clients"

// PrimarySplitBrain is the fixed schedule (and matrix scenario) that
// strikes PrimarySplitWithClients on a database primary a second into the
// run, with every client contending throughout.
const PrimarySplitBrain = "primary-split-brain"

// PrimaryTarget names no server but whichever database server is the
// primary when the fault strikes (cluster.ServerKind.Role's "primary");
// the engine asks the servers and the history records which node it was.
const PrimaryTarget = "primary"

func init() {
	register(primarySplit{})
	// As sentinel-split-brain: four clients, two on each side, all
	// contending with short sections from the start, none stopped at a
	// failpoint; the holder when it strikes is on the old side with the
	// next slot. The split lasts as long too (splitBrainFor: 6 s at the
	// lab's 1 s TTL), several times the promotion (0.1 to 0.6 s) and the
	// majority side's reconnection (up to about a second: a connection to
	// the old primary is reset at its next packet once the re-pointing
	// rule is in, see redirect, and the next dial is re-pointed). The run
	// observes for reconnectBound after the heal, the time the old
	// side's clients take to reach the moved address.
	Fixed[PrimarySplitBrain] = func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		st := Step{At: Duration(Lead), Kind: PrimarySplitWithClients, Target: PrimaryTarget, Duration: Duration(splitBrainFor(ttl))}
		s := fixed(impl, fencing, ttl, st, shape{clients: 4, observe: reconnectBound})
		s.Name = PrimarySplitBrain
		return s
	}
}

// primarySplit is PrimarySplitWithClients.
type primarySplit struct{ onOwnHosts }

func (primarySplit) Name() string     { return PrimarySplitWithClients }
func (primarySplit) goesWithHolder()  {}
func (primarySplit) splitsClients()   {}
func (primarySplit) PromotesReplica() {}

// Reconnect: the old side's clients reach the moved address after the
// heal as a promotion's clients do.
func (primarySplit) Reconnect() time.Duration { return reconnectBound }

// Applies: the lock's servers are a database primary with a replica the
// lab promotes (primary-promotion's condition), on hosts of the lab's own,
// with clients for both sides.
func (primarySplit) Applies(spec impls.Spec, topo Topology) error {
	if err := onHosts(spec, topo); err != nil {
		return err
	}
	if err := (primaryPromotion{}).Applies(spec, topo); err != nil {
		return err
	}
	if topo.Clients < 3 {
		return errors.New("it needs at least three clients: the holder and one more with the old primary, and one with the promoted replica")
	}
	return nil
}

// Targets: the primary with the holder; explore draws it as any other.
func (primarySplit) Targets(Topology) []string { return []string{PrimaryTarget} }

// Settle waits, as primary-promotion's does, until the replica has the
// lock's table: the promoted replica must serve the majority side's
// clients the lock, not fail them on a missing table.
func (primarySplit) Settle(ctx context.Context, sys System, target string) (string, error) {
	name := target
	if role, ok := RoleOf(target); ok {
		var err error
		if name, err = sys.ServerWithRole(ctx, role); err != nil {
			return "", err
		}
	}
	return primaryPromotion{}.Settle(ctx, sys, name)
}

// majorityClients are the client hosts of the side that the old primary
// is cut off from: every slot SplitClients does not take.
func majorityClients(sys System, target string) ([]*hosts.Host, error) {
	slots, ok := SplitClients(PrimarySplitWithClients, target, sys.Clients())
	if !ok {
		return nil, fmt.Errorf("%s needs a holder@server target and three clients or more, got %q", PrimarySplitWithClients, target)
	}
	old := map[int]bool{}
	for _, s := range slots {
		old[s] = true
	}
	var out []*hosts.Host
	for i := range sys.Clients() {
		if old[i] {
			continue
		}
		h, err := sys.ClientHost(i)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func (primarySplit) Inject(ctx context.Context, sys System, target string) (string, error) {
	_, server, _ := SplitLink(target)
	primary, replica, promoter, err := promotionPair(sys, server)
	if err != nil {
		return "", err
	}
	if primary.Host == nil || replica.Host == nil {
		return "", errors.New("split: the primary and its replica must run on hosts of their own")
	}
	a, b, names, err := splitBrain{}.sides(sys, target)
	if err != nil {
		return "", err
	}
	majority, err := majorityClients(sys, target)
	if err != nil {
		return "", err
	}
	markStrike(ctx, primary, []*cluster.Node{replica})
	note := names + ", packets dropped both ways"
	// The watch opens before the cut (its probe makes its table, which a
	// primary waiting for its replica could not commit after it), and its
	// times count from the cut.
	w, err := watchPrimary(ctx, primary)
	if err != nil {
		note += "; not watched: " + err.Error()
	}
	fail := func(err error) (string, error) {
		endPrimaryWatch(primary)
		healSplit(context.WithoutCancel(ctx), a, b, primary, replica)
		return "", fmt.Errorf("%s %s: %w", PrimarySplitWithClients, target, err)
	}
	if err := netfault.Partition(ctx, a, b); err != nil {
		return fail(err)
	}
	start := time.Now()
	if err := promoter.Promote(ctx, replica); err != nil {
		return fail(err)
	}
	took := time.Since(start).Round(time.Millisecond)
	if w != nil {
		w.promoted(replica.Name)
	}
	markPromoted(ctx, primary, replica)
	for _, h := range majority {
		if err := redirect(ctx, h, primary, replica); err != nil {
			return fail(err)
		}
	}
	return fmt.Sprintf("%s; %s promoted in %v; the other side's clients' hosts send %s to it", note, replica.Name, took, primary.Addr), nil
}

// Heal ends the split as fencing would, late: the old primary is
// SIGKILLed first, so that nothing it commits after the heal reaches a
// client, then the partition goes, the old primary's address moves to
// the promoted replica's host (the re-pointing rules stay: see healSplit).
func (primarySplit) Heal(ctx context.Context, sys System, target string) (string, error) {
	_, server, _ := SplitLink(target)
	primary, replica, _, err := promotionPair(sys, server)
	if err != nil {
		return "", err
	}
	a, b, _, err := splitBrain{}.sides(sys, target)
	if err != nil {
		return "", err
	}
	seen := endPrimaryWatch(primary)
	if err := healSplit(ctx, a, b, primary, replica); err != nil {
		return "", err
	}
	return fmt.Sprintf("during the split: %s; healed: SIGKILL %s, %s now answers on %s's host", seen, primary.Name, primary.Addr, replica.Name), nil
}

// healSplit kills the old primary, heals the partition and moves the old
// primary's address to the replica; it goes on past a failed step, so
// that a failed inject leaves the partition lifted.
func healSplit(ctx context.Context, a, b []*hosts.Host, primary, replica *cluster.Node) error {
	var errs []error
	if err := primary.Kill(); err != nil {
		errs = append(errs, fmt.Errorf("SIGKILL %s: %w", primary.Name, err))
	}
	if err := netfault.Heal(ctx, append(a, b...)...); err != nil {
		errs = append(errs, err)
	}
	if err := moveAddress(ctx, primary, replica); err != nil {
		errs = append(errs, err)
	}
	// The majority clients' re-pointing rules stay until their hosts go:
	// they send the old primary's address where it now lives anyway, and
	// deleting one (iptables-nft, this kernel) ends the address
	// translation of the connections it made, so their next packet goes
	// untranslated to the old address and is reset. That reset the
	// connection holding the row lock 0.2 s after the heal, and with it
	// the run: mysql-for-update@mysql-replica-semisync/primary-split-brain
	// was stuck in 3 of 3 runs (a bare TCP connection through such a
	// rule, in namespaces of its own, is reset when the rule goes and
	// survives when it stays).
	return errors.Join(errs...)
}

// Measured hands over, once healed, what the watch saw as figures of the
// run (engine.ScheduleRun.Figures).
func (primarySplit) Measured(sys System, target string) map[string]float64 {
	_, server, _ := SplitLink(target)
	primary, err := sys.Server(server)
	if err != nil {
		return nil
	}
	return takePrimaryWatched(primary).figures()
}

// redirect adds the rule on a client's host h that sends what its
// processes send to the primary's address and port
// to the replica's instead: a DNAT in the nat table's OUTPUT chain. Every
// new connection reaches the replica. A connection opened to the old
// primary before the rule does not stay on it: with iptables-nft on this
// kernel its next packet is translated too, reaches the replica, which has
// no such connection, and is answered with a reset, as a virtual address
// moved to the new primary's host would answer it (a DNS name re-pointed
// would leave it to time out instead). Shown in namespaces of its own: a
// TCP connection cut off by DROP rules times out, and with the DNAT rule
// added beside them it is reset by the new address at its next send; in
// the history of pg-unique-insert@pg-replica-sync/primary-split-brain
// under production, seed 23602, a majority client's release on a pooled
// connection from before the split was reset 360 ms into the split, just
// after the rule went in. The replica's answers come back from its own
// address, which no rule of the partition drops on this side (their
// source is rewritten to the primary's after the filter has passed them).
func redirect(ctx context.Context, h *hosts.Host, primary, replica *cluster.Node) error {
	from, err := netip.ParseAddrPort(primary.Addr)
	if err != nil {
		return fmt.Errorf("primary address %q: %w", primary.Addr, err)
	}
	to, err := netip.ParseAddrPort(replica.Addr)
	if err != nil {
		return fmt.Errorf("replica address %q: %w", replica.Addr, err)
	}
	args := []string{"-w", "-t", "nat", "-A", "OUTPUT", "-d", from.Addr().String(), "-p", "tcp",
		"--dport", strconv.Itoa(int(from.Port())), "-m", "comment", "--comment", "locklab split-brain",
		"-j", "DNAT", "--to-destination", net.JoinHostPort(to.Addr().String(), strconv.Itoa(int(to.Port())))}
	if err := h.Run(ctx, "iptables", args...); err != nil {
		return fmt.Errorf("re-point %s to %s on %s: %w", primary.Addr, replica.Name, h.Name, err)
	}
	return nil
}
