package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// The replica that acknowledged is lost. WAIT numreplicas counts
// acknowledgements, not which replica gave them, and Sentinel promotes
// whichever replica is left: a grant confirmed by replica A while replica
// B was behind is lost when A dies with the master and B is promoted.
// Redis's documentation of WAIT says so ("a write acknowledged by
// replicas can still be lost in a fail-over"); these kinds make it
// happen on a Sentinel group, and record what the servers said (each
// one's offset, which replicas the master counted, who was promoted), so
// a verdict rests on what B had.
//
// A run with these kinds has three replicas, not the group's two (Shape):
// A, which keeps up and dies with the master, and B and C, which are
// behind. With two, the promoted B is left with no replica at all, and a
// lock that waits for one (redis-setnx-px-wait) can grant nothing until a
// lost server is back and Sentinel has re-pointed it to B (Sentinel's
// source waits four publish periods, 8 s, before it reconfigures a
// restarted instance; not timed here). Seen: stuck in 3 of 3 runs, no
// grant within 5 s of the heal, the promoted replica 208 bytes short of
// the master. Every lock on redis-sentinel-min-replicas would be stuck
// so too (the lone promoted replica refuses writes). With C, whichever of B and C is promoted
// has the other as its replica at once, as a production group of a
// master and three replicas would, and the locks go on granting from
// the promoted one: what they lost shows.
const (
	// AckedReplicaLost: from the settle on, the master's replication
	// stream to every replica but the first by name (A) is held back
	// LagBehind while A keeps up, so a WAIT 1 is answered by A alone;
	// when the step strikes, the master and A are SIGKILLed together and
	// Sentinel promotes one of the others (B), which never received what
	// the master wrote since the lag began. At the heal the lag ends (the dead master's
	// packets still held are dropped) and the master and A are restarted
	// (empty: the lab's Redis keeps nothing on disk).
	AckedReplicaLost = "acked-replica-lost"
	// RejoiningReplicaPromoted: every replica but A is down at the
	// grant. The settle SIGKILLs each and restarts it (empty) with the
	// master's stream to it held back LagBehind, so it is up, seen by
	// every sentinel, and rejoining, but its master does not count it yet
	// (its handshake and full sync come through the held stream): a lock
	// that waits for the replicas its master counts waits for A alone.
	// When the step strikes, the master and A are SIGKILLed and Sentinel
	// promotes one of the others, which has none of the run's writes.
	// Healed as AckedReplicaLost.
	RejoiningReplicaPromoted = "rejoining-replica-promoted"

	// SentinelAckedReplicaLost and SentinelRejoiningReplicaPromoted are
	// the fixed schedules (and matrix scenarios) that strike them while
	// the holder is inside its section.
	SentinelAckedReplicaLost         = "sentinel-acked-replica-lost"
	SentinelRejoiningReplicaPromoted = "sentinel-rejoining-replica-promoted"
)

// SentinelSeesReplicaBound bounds the settle's wait for every sentinel to
// count a restarted replica as good again: a sentinel reconnects to an
// instance at most once a second and pings it every down-after (500 ms),
// so a healthy group sees it within about two seconds.
const SentinelSeesReplicaBound = 5 * time.Second

func init() {
	register(replicaLost{name: AckedReplicaLost})
	register(replicaLost{name: RejoiningReplicaPromoted, rejoining: true})
}

// The schedules are master-kill-under-lag's step with this kind: struck
// while the holder is inside its section, the holder going on inside the
// fault once another client has read the resource from the promoted
// replica (after the heal, that client would have moved on to higher
// tokens and the resource would refuse the stale write, hiding a
// repeated fencing token).
var replicaLostSchedules = map[string]FixedSchedule{
	SentinelAckedReplicaLost: func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: AckedReplicaLost, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second), GoesOn: InFault}, serverShape)
	},
	SentinelRejoiningReplicaPromoted: func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: RejoiningReplicaPromoted, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second), GoesOn: InFault}, serverShape)
	},
}

var _ = joinFixed(replicaLostSchedules)

// replicaLost is both kinds: the replicas but A lagging but counted by
// their master (AckedReplicaLost), or rejoining and not counted yet
// (RejoiningReplicaPromoted).
type replicaLost struct {
	name      string
	rejoining bool
}

// LostReplicas is how many replicas a run with these kinds gives the
// master: A, and two behind it, so the one promoted has a replica.
const LostReplicas = 3

// Shape: the lab's hosts (a held stream, packets on a host's queue) and
// LostReplicas replicas in the master's group.
func (replicaLost) Shape(d topology.Declaration) topology.Declaration {
	d.Hosts = true
	d.Groups = slices.Clone(d.Groups)
	for i, g := range d.Groups {
		// The master's replica group: the kind applies only to a
		// Sentinel group (Applies), whose one group of replicas it is.
		if g.Role == topology.Replica && g.Count > 0 {
			d.Groups[i].Count = max(g.Count, LostReplicas)
		}
	}
	return d
}

func (k replicaLost) Name() string                 { return k.name }
func (replicaLost) Targets(topo Topology) []string { return []string{MasterTarget} }

// Applies: a Sentinel group (two replicas for the master, sentinels to
// choose between them) on the lab's hosts, with a kernel that can hold
// packets. A Redis Cluster's master has one replica, so there is no
// second one to be promoted in place of the one that acknowledged.
func (k replicaLost) Applies(spec impls.Spec, topo Topology) error {
	if err := lagApplies(spec, topo); err != nil {
		return err
	}
	redis, sentinels := 0, 0
	for _, s := range topo.Servers {
		if rolesOf(s.Kind).Elected == "master" {
			redis++
		}
		if topo.IsSentinel(s.Name) {
			sentinels++
		}
	}
	if sentinels == 0 || redis < 3 {
		return errors.New("it loses the master together with the replica that acknowledged, and needs Sentinel to promote a second " +
			"replica in its place: a Sentinel group of a master and two replicas (a Redis Cluster's master has one replica)")
	}
	// A lock that waits for every replica its master counts
	// (impls.Backend.AllReplicas) is refused by AckedReplicaLost's held-back
	// replica, which is counted and never acknowledges within the WAIT's
	// timeout: every grant is given back, no holder is ever inside its
	// section, and a run would wait for one forever (seen: explore's
	// opening at the holder, "worker 0 did not reach failpoint" after
	// 35 s). That it refuses is its answer to this fault, shown by
	// impls/redislock's TestSetNXPXWaitAllWaitsForTheReplicasItsMasterCounts;
	// RejoiningReplicaPromoted, whose replicas the master does not count
	// yet, is the kind that reaches it.
	if !k.rejoining && spec.Backend.AllReplicas {
		return errors.New("the lock waits for every replica its master counts, and the held-back one never acknowledges in time: " +
			"every grant is given back and no holder is inside its section when the master and the acknowledging replica die")
	}
	return nil
}

// lostPair is what the settle chose on a master: A, the replica lost with
// it, the others, held back, and the master's offset when they were.
type lostPair struct {
	a      *cluster.Node
	behind []*cluster.Node
	start  int64
}

var lostPairs = struct {
	sync.Mutex
	m map[*cluster.Node]lostPair
}{m: map[*cluster.Node]lostPair{}}

// settleReplicasBound is how long a settle waits for the master to count
// both its replicas online.
const settleReplicasBound = 10 * time.Second

// Settle holds every replica but A back (and, for RejoiningReplicaPromoted,
// first kills and restarts each), before any client is granted the lock.
func (k replicaLost) Settle(ctx context.Context, sys System, target string) (string, error) {
	name := target
	if role, ok := RoleOf(target); ok {
		var err error
		if name, err = sys.ServerWithRole(ctx, role); err != nil {
			return "", err
		}
	}
	master, err := sys.Server(name)
	if err != nil {
		return "", err
	}
	if master.Host == nil {
		return "", fmt.Errorf("%s runs on no host of the lab's own, so its replication link cannot be held back", name)
	}
	// A group just started may not count its second replica yet (seen
	// under load: the master counted one, 1.5 s in): wait for it, a while.
	var mr cluster.Replication
	var replicas []*cluster.Node
	deadline := time.Now().Add(settleReplicasBound)
	for {
		if mr, err = readReplication(ctx, master); err != nil {
			return "", fmt.Errorf("%s: %w", k.name, err)
		}
		if mr.Role == "master" {
			if replicas, err = replicasOf(sys, mr); err != nil {
				return "", fmt.Errorf("%s: %w", k.name, err)
			}
			if len(replicas) >= 2 {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if mr.Role != "master" {
				return "", fmt.Errorf("%s: %s is a %s, not a master: %w", k.name, name, mr.Role, ErrNotNow)
			}
			return "", fmt.Errorf("%s: %s counts %d replicas (%s) after %v, and the fault needs two: %w", k.name, name, len(replicas), replicasSeen(mr.Replicas), settleReplicasBound, ErrNotNow)
		}
		time.Sleep(50 * time.Millisecond)
	}
	slices.SortFunc(replicas, func(x, y *cluster.Node) int { return strings.Compare(x.Name, y.Name) })
	a, behind := replicas[0], replicas[1:]
	_, port, err := splitPort(master.Addr)
	if err != nil {
		return "", err
	}
	var note strings.Builder
	var names []string
	for _, b := range behind {
		names = append(names, b.Name)
		if k.rejoining {
			if err := b.Kill(); err != nil {
				return "", fmt.Errorf("SIGKILL %s: %w", b.Name, err)
			}
		}
		if err := netfault.DelayFromPort(ctx, b.Host, []*hosts.Host{master.Host}, port, LagBehind, 0); err != nil {
			dropLag(context.WithoutCancel(ctx), sys)
			return "", fmt.Errorf("hold back %s's stream to %s: %w", name, b.Name, err)
		}
	}
	if k.rejoining {
		fmt.Fprintf(&note, "SIGKILL %s; ", strings.Join(names, ", "))
	}
	fmt.Fprintf(&note, "replication stream of %s (port %d) to %s held back %v from master_repl_offset %d",
		name, port, strings.Join(names, ", "), LagBehind, mr.Offset)
	if k.rejoining {
		for _, b := range behind {
			if err := b.Restart(ctx, false); err != nil {
				return "", fmt.Errorf("restart %s: %w", b.Name, err)
			}
		}
		for _, b := range behind {
			seen, err := sentinelsSee(ctx, sys, b)
			if err != nil {
				return "", fmt.Errorf("%s: %w", k.name, err)
			}
			fmt.Fprintf(&note, "; %s restarted empty, rejoining through the held stream: %s", b.Name, seen)
		}
		if mr, err = readReplication(ctx, master); err == nil {
			fmt.Fprintf(&note, "; %s now counts: %s", name, replicasSeen(mr.Replicas))
		}
	} else {
		fmt.Fprintf(&note, "; %s keeps up (%s counts: %s)", a.Name, name, replicasSeen(mr.Replicas))
	}
	lostPairs.Lock()
	lostPairs.m[master] = lostPair{a: a, behind: behind, start: mr.Offset}
	lostPairs.Unlock()
	return note.String(), nil
}

// sentinelsSee waits until every sentinel of the run counts b as a good
// replica (no s_down, no disconnected flag), so the fail-over the fault
// starts can promote it; it says what they said.
func sentinelsSee(ctx context.Context, sys System, b *cluster.Node) (string, error) {
	sentinels, err := sentinelsOf(sys)
	if err != nil {
		return "", err
	}
	start := time.Now()
	for {
		var bad []string
		for _, s := range sentinels {
			flags, err := cluster.SentinelReplicaFlags(ctx, s, b.Addr)
			if err != nil {
				bad = append(bad, err.Error())
			} else if strings.Contains(flags, "s_down") || strings.Contains(flags, "disconnected") {
				bad = append(bad, s.Name+": "+flags)
			}
		}
		if len(bad) == 0 {
			return fmt.Sprintf("every sentinel counts %s good after %v", b.Name, time.Since(start).Round(time.Millisecond)), nil
		}
		if time.Since(start) > SentinelSeesReplicaBound {
			return "", fmt.Errorf("the sentinels did not count %s good within %v: %s", b.Name, SentinelSeesReplicaBound, strings.Join(bad, "; "))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Inject records the master's offset and whom it counts, A's and B's own
// offsets, then SIGKILLs the master and A together. Without a settled
// pair (a drawn schedule's second strike, after a fail-over moved the
// master), it loses the master with its most advanced replica, and says
// that no lag holds the other back.
func (k replicaLost) Inject(ctx context.Context, sys System, target string) (string, error) {
	master, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	mr, err := readReplication(ctx, master)
	if err != nil {
		return "", fmt.Errorf("%s: %w", k.name, err)
	}
	lostPairs.Lock()
	p, settled := lostPairs.m[master]
	lostPairs.Unlock()
	if !settled {
		replicas, err := replicasOf(sys, mr)
		if err != nil {
			return "", fmt.Errorf("%s: %w", k.name, err)
		}
		if len(replicas) < 2 {
			return "", fmt.Errorf("%s: %s counts %d replicas (%s), and the fault needs two: %w", k.name, master.Name, len(replicas), replicasSeen(mr.Replicas), ErrNotNow)
		}
		offsets := map[*cluster.Node]int64{}
		for _, r := range replicas {
			if rr, err := readReplication(ctx, r); err == nil {
				offsets[r] = rr.ReplicaOffset
			}
		}
		slices.SortFunc(replicas, func(x, y *cluster.Node) int { return int(offsets[y] - offsets[x]) })
		p = lostPair{a: replicas[0], behind: replicas[1:], start: -1}
		// The heal restarts A too.
		lostPairs.Lock()
		lostPairs.m[master] = p
		lostPairs.Unlock()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s master_repl_offset %d", master.Name, mr.Offset)
	if settled {
		fmt.Fprintf(&b, " (%d when the others were held back)", p.start)
	} else {
		b.WriteString(" (no settled pair on this master: it became master after the settle; nothing holds a replica back)")
	}
	fmt.Fprintf(&b, ", counting %s", replicasSeen(mr.Replicas))
	for _, r := range append([]*cluster.Node{p.a}, p.behind...) {
		rr, err := readReplication(ctx, r)
		if err != nil {
			fmt.Fprintf(&b, "; %s unread: %v", r.Name, err)
			continue
		}
		fmt.Fprintf(&b, "; %s slave_repl_offset %d, %d bytes behind", r.Name, rr.ReplicaOffset, mr.Offset-rr.ReplicaOffset)
	}
	if err := master.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", master.Name, err)
	}
	if err := p.a.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", p.a.Name, err)
	}
	fmt.Fprintf(&b, "; SIGKILL %s and %s: Sentinel has only replicas that were behind to promote", master.Name, p.a.Name)
	return b.String(), nil
}

// Heal first waits for Sentinel to promote one of the replicas that were
// behind (awaitPromotion), then says what each is now (promoted or not,
// and its offset, read before the held packets could reach it), ends the
// lag, dropping the dead master's packets still held, and restarts the
// master and A.
//
// Without the wait a short fault (explore's shrinker cut one to 186 ms)
// healed before Sentinel's down-after: the master and A came back empty,
// B and C resynchronised from the empty master, and the lock state was
// gone with no replica promoted. That is a fault of its own (a master and
// its replica losing power together without persistence), not the one
// this kind names, and a counterexample under this name must show a
// promotion.
func (k replicaLost) Heal(ctx context.Context, sys System, target string) (string, error) {
	master, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	lostPairs.Lock()
	p, ok := lostPairs.m[master]
	delete(lostPairs.m, master)
	lostPairs.Unlock()
	var seen string
	lost := []*cluster.Node{master}
	if ok {
		lost = append(lost, p.a)
		seen = awaitPromotion(ctx, sys, p.behind) + "; "
		for _, b := range p.behind {
			if rr, err := readReplication(ctx, b); err != nil {
				seen += fmt.Sprintf("%s unread: %v; ", b.Name, err)
			} else {
				seen += fmt.Sprintf("%s is a %s at offset %d; ", b.Name, rr.Role, rr.Offset)
			}
		}
	}
	if err := dropLag(ctx, sys); err != nil {
		return "", err
	}
	var restarted []string
	for _, n := range lost {
		if err := n.Restart(ctx, true); err != nil {
			return "", fmt.Errorf("restart %s: %w", n.Name, err)
		}
		restarted = append(restarted, n.Name)
	}
	return fmt.Sprintf("before the heal: %slag ended, the dead master's packets still held dropped; %s restarted (empty: no persistence)",
		seen, strings.Join(restarted, " and ")), nil
}

// sentinelsOf lists the run's sentinels: the lock servers that direct
// clients to a master rather than grant themselves.
func sentinelsOf(sys System) ([]*cluster.Node, error) {
	var sentinels []*cluster.Node
	for _, name := range sys.LockServers() {
		n, err := sys.Server(name)
		if err != nil {
			return nil, err
		}
		if rolesOf(n.Kind).Directs {
			sentinels = append(sentinels, n)
		}
	}
	return sentinels, nil
}

// awaitPromotion waits until one of the replicas left behind reports
// itself a master, bounded by the group's own down-after plus its
// failover-timeout (as a sentinel of the run reports them: the slowest a
// healthy group takes to notice and promote), and says which was promoted
// and after how long, or that none was within the bound: then the heal
// goes on and the record says the fault promoted nothing.
func awaitPromotion(ctx context.Context, sys System, behind []*cluster.Node) string {
	bound := settleReplicasBound
	sentinels, _ := sentinelsOf(sys)
	for _, n := range sentinels {
		if v, err := cluster.SentinelState(ctx, n); err == nil {
			bound = v.DownAfter + v.FailoverTimeout
			break
		}
	}
	promoted, waited, err := awaitReplication(ctx, behind, bound, "a promoted replica", func(seen map[string]cluster.Replication) (string, bool) {
		for _, b := range behind {
			if r, ok := seen[b.Name]; ok && r.Role == "master" {
				return b.Name, true
			}
		}
		return "", false
	})
	if err != nil {
		return fmt.Sprintf("no replica promoted by the heal (bounded by the group's down-after plus failover-timeout): %v", err)
	}
	return fmt.Sprintf("waited %v at the heal for Sentinel to promote %s", waited.Round(time.Millisecond), promoted)
}
