package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
)

// SplitBrainWithClients is split brain with clients on both sides: the
// master (alive, never killed) is cut off, both ways, packets dropped,
// together with the holder and at least one more client, from every other
// lock server (the replicas, the sentinels) and the other clients. The
// majority side promotes a replica and its clients are granted by it; the
// clients on the old side keep reaching the old master over the
// connections they had, and cannot learn of the new one, since every
// sentinel is on the other side. Its target is a Link from the holder to
// the master (the engine makes it, as for net-split-with-holder, from
// whichever client holds the lock when it strikes), and the old side's
// other clients follow the holder's slot (SplitClients). While it holds,
// the lab (whose vantage point no cut reaches) writes a probe key on the
// old master and reads the other Redis servers' roles, so the record says
// when a replica was promoted and until when the old master still
// accepted writes (with min-replicas-to-write, when it began to refuse
// them, in its own words).
const SplitBrainWithClients = "split-brain-with-clients"

// SentinelSplitBrain is the fixed schedule (and matrix scenario) that
// strikes SplitBrainWithClients on a Sentinel group's master a second into
// the run, with every client contending throughout.
const SentinelSplitBrain = "sentinel-split-brain"

func init() {
	register(splitBrain{})
	// Four clients, two on each side, all contending with short sections
	// from the start: a split brain is both sides granting, so no client
	// is stopped at a failpoint, and the holder (whoever holds when it
	// strikes) is on the old side with the next slot.
	Fixed[SentinelSplitBrain] = func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		st := Step{At: Duration(Lead), Kind: SplitBrainWithClients, Target: MasterTarget, Duration: Duration(splitBrainFor(ttl))}
		s := fixed(impl, fencing, ttl, st, shape{clients: 4, observe: time.Second})
		s.Name = SentinelSplitBrain
		return s
	}
}

// splitBrainFor is how long the split lasts for a lease of ttl: pastTTL
// (the lab's cut, past a lease) and three seconds more. At the lab's 1 s
// TTL that is 6 s: past Sentinel's promotion (about 1.3 s after a cut)
// and past the latest moment a master with min-replicas-to-write 1 and
// min-replicas-max-lag 1 can still accept a write (its replicas
// acknowledge once a second and it recounts the good ones once a second,
// in whole seconds: up to 3 s after the cut), with 3 s to spare, so that
// the grants the old side makes after that are the setting's measure.
func splitBrainFor(ttl time.Duration) time.Duration { return pastTTL(ttl) + 3*time.Second }

// splitBrain is SplitBrainWithClients.
type splitBrain struct{ onOwnHosts }

func (splitBrain) Name() string { return SplitBrainWithClients }

// goesWithHolder marks a kind whose target the engine makes a Link from
// the client holding the lock to the server it aims at (WithHolder).
func (splitBrain) goesWithHolder() {}

// splitsClients marks a kind that takes the holder and the next clients
// (SplitClients) to the old side of a split.
func (splitBrain) splitsClients() {}

// clientSplitter is a kind that splits clients (see splitsClients).
type clientSplitter interface{ splitsClients() }

// holderSide is a kind that goes with the holder (see goesWithHolder).
type holderSide interface{ goesWithHolder() }

func goesWithHolder(kind string) bool {
	_, ok := kinds[kind].(holderSide)
	return ok
}

func (splitBrain) Applies(spec impls.Spec, topo Topology) error {
	if err := onHosts(spec, topo); err != nil {
		return err
	}
	if !topo.Ensemble || !hasMaster(topo) {
		return errors.New("it splits a master that the rest of its group can replace (a Sentinel group's, a Redis Cluster's) from that group")
	}
	if topo.Clients < 3 {
		return errors.New("it needs at least three clients: the holder and one more with the old master, and one with the majority")
	}
	return serverApplies(spec, topo)
}

// Targets: the master with the holder; explore draws it as any other.
func (splitBrain) Targets(Topology) []string { return []string{MasterTarget} }

// oldSideCount is how many of n clients go with the old master: half,
// and at least the holder and one more, leaving one or more.
func oldSideCount(n int) int { return min(max(2, n/2), n-1) }

// SplitClients names the client slots a fault of kind strikes when aimed
// at target (resolved, a Link from the holder's slot), among clients
// slots: for split-brain-with-clients (and every kind that splits
// clients so, clientSplitter), the holder's slot and the next ones,
// wrapping, half the clients; ok is false for every other kind
// (its one client, if any, is its target).
func SplitClients(kind, target string, clients int) (slots []int, ok bool) {
	if _, splits := kinds[kind].(clientSplitter); !splits || clients < 3 {
		return nil, false
	}
	client, _, link := SplitLink(target)
	if !link {
		return nil, false
	}
	holder, err := ClientSlot(client)
	if err != nil || holder >= clients {
		return nil, false
	}
	for i := range oldSideCount(clients) {
		slots = append(slots, (holder+i)%clients)
	}
	return slots, true
}

// sides are the two halves: the old master and the old side's clients,
// and every other lock server and client.
func (splitBrain) sides(sys System, target string) (a, b []*hosts.Host, names string, err error) {
	_, server, ok := SplitLink(target)
	slots, known := SplitClients(SplitBrainWithClients, target, sys.Clients())
	if !ok || !known {
		return nil, nil, "", fmt.Errorf("%s needs a holder@server target and three clients or more, got %q", SplitBrainWithClients, target)
	}
	sh, err := sys.ServerHost(server)
	if err != nil {
		return nil, nil, "", err
	}
	a = []*hosts.Host{sh}
	old, other := []string{server}, []string{}
	oldSide := map[int]bool{}
	for i, slot := range slots {
		h, err := sys.ClientHost(slot)
		if err != nil {
			return nil, nil, "", err
		}
		a, oldSide[slot] = append(a, h), true
		name := fmt.Sprintf("client-%d", slot)
		if i == 0 {
			name += " (holder)"
		}
		old = append(old, name)
	}
	for _, name := range sys.LockServers() {
		if name == server {
			continue
		}
		h, err := sys.ServerHost(name)
		if err != nil {
			return nil, nil, "", err
		}
		b, other = append(b, h), append(other, name)
	}
	for i := range sys.Clients() {
		if oldSide[i] {
			continue
		}
		h, err := sys.ClientHost(i)
		if err != nil {
			return nil, nil, "", err
		}
		b, other = append(b, h), append(other, fmt.Sprintf("client-%d", i))
	}
	return a, b, strings.Join(old, ", ") + " | " + strings.Join(other, ", "), nil
}

func (k splitBrain) Inject(ctx context.Context, sys System, target string) (string, error) {
	a, b, names, err := k.sides(sys, target)
	if err != nil {
		return "", err
	}
	_, server, _ := SplitLink(target)
	// The watch starts as the cut does, so that its times count from
	// where the history's record of the fault does (the inject's start;
	// putting the rules on a dozen hosts takes a while).
	note := names + ", packets dropped both ways"
	if err := watchSplit(sys, server); err != nil {
		// The split stands without its measure; the record says why.
		note += "; not watched: " + err.Error()
	}
	if err := netfault.Partition(ctx, a, b); err != nil {
		endWatch(sys, server)
		netfault.Heal(context.WithoutCancel(ctx), append(a, b...)...)
		return "", fmt.Errorf("%s %s: %w", SplitBrainWithClients, target, err)
	}
	return note, nil
}

func (k splitBrain) Heal(ctx context.Context, sys System, target string) (string, error) {
	a, b, _, err := k.sides(sys, target)
	if err != nil {
		return "", err
	}
	_, server, _ := SplitLink(target)
	seen := endWatch(sys, server)
	if err := netfault.Heal(ctx, append(a, b...)...); err != nil {
		return "", err
	}
	return "during the split: " + seen.String() + "; healed", nil
}

// Measured hands over, once healed, what the watch saw as figures of the
// run (engine.ScheduleRun.Figures).
func (splitBrain) Measured(sys System, target string) map[string]float64 {
	_, server, _ := SplitLink(target)
	return takeWatched(sys, server).figures()
}
