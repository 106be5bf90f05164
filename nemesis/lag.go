package nemesis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
)

// Replication lag as a fault. On one machine over loopback a replica is a
// millisecond behind its master, so every fail-over the lab ran found the
// last grant already on the replica it promoted. In production a replica
// can be seconds behind (a busy master, a slow link, a full sync), and
// whatever the master wrote in those seconds is lost when it dies. These
// kinds hold the master's replication stream back from its replicas by
// LagBehind on the lab's hosts (faults/netfault's delay queue, on the
// master's port alone, so nothing else between the hosts slows), and
// record the offsets INFO replication shows, so a verdict under lag rests
// on what the replicas had, not on what the lag was meant to do.
const (
	// ReplicationLag holds back the replication stream from the master to
	// each of its replicas for the step, then lets it go: the replicas
	// fall LagBehind behind and catch up at the heal. Drawn by explore on
	// its own, it slows replication and nothing else (a lock that waits
	// for its replicas' acknowledgement feels it).
	ReplicationLag = "replication-lag"
	// LaggingMasterKill is a fail-over under lag: the master's stream is
	// held back from before any client is granted the lock (the kind
	// settles so, nemesis.Settler), and when the step strikes the master
	// is SIGKILLed, with what it wrote since the lag began still on its way
	// to the replicas; its group (Sentinel, or the Redis Cluster) promotes
	// a replica that never received it. At the heal the lag ends and the
	// old master is restarted (empty: the lab's Redis keeps nothing on
	// disk), as after server-kill.
	LaggingMasterKill = "lagging-master-kill"
	// MasterKillUnderLag is the fixed schedule (and matrix scenario) that
	// strikes LaggingMasterKill while the holder is inside its section.
	MasterKillUnderLag = "master-kill-under-lag"
)

// LagBehind is how far behind the lag holds a master's replicas: every
// packet of the master's replication stream reaches them that much later.
// Five seconds is a replica "seconds behind" as production sees one, and
// longer than a fail-over takes in the lab (Sentinel promotes about 1.3 s
// after the master dies, a Redis Cluster within 2 s), so the write the
// master made just before it died has not reached the replica promoted,
// and its packets, let through later, meet a link the promotion closed.
// It is not sized to any verdict: a shorter lag than the fail-over only
// delays the write, and the record's offsets would show it arrived.
const LagBehind = 5 * time.Second

func init() {
	register(replicationLag{})
	register(laggingMasterKill{})
}

// The fail-over under lag as a fixed schedule, on the step of
// sentinel-master-kill and cluster-master-kill (the master killed while
// the holder is inside its section, restarted as long as a split lasts),
// with one difference besides the lag: the holder goes on inside the
// fault (InFault), once another client has read the resource from the
// promoted replica. The replica lacks the holder's fencing increment, so
// that client holds the holder's token again; a holder that waited for
// the heal, as in sentinel-master-kill, wrote after the other had moved
// on to higher tokens, and the resource refused it (seen: redis-setnx-px
// fenced on redis-sentinel, safe, with token 1 issued twice), which
// hides the repeated token instead of testing it. Inside the fault the
// two holders of one token write around each other's read.
var lagSchedules = map[string]FixedSchedule{
	MasterKillUnderLag: func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: LaggingMasterKill, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second), GoesOn: InFault}, serverShape)
	},
}

var _ = joinFixed(lagSchedules)

// lagApplies: a master with replicas on the lab's hosts, and a kernel
// that can hold packets.
func lagApplies(spec impls.Spec, topo Topology) error {
	if err := onHosts(spec, topo); err != nil {
		return err
	}
	if !hasMaster(topo) {
		return errors.New("it holds back a master's replication stream, and the lock's servers have no master with replicas " +
			"(a Sentinel group's or a Redis Cluster's)")
	}
	if err := netfault.DelayAvailable(); err != nil {
		return err
	}
	return serverApplies(spec, topo)
}

type replicationLag struct{ onOwnHosts }

func (replicationLag) Name() string                                 { return ReplicationLag }
func (replicationLag) Applies(spec impls.Spec, topo Topology) error { return lagApplies(spec, topo) }
func (replicationLag) Targets(topo Topology) []string               { return []string{MasterTarget} }

func (replicationLag) Inject(ctx context.Context, sys System, target string) (string, error) {
	return holdBack(ctx, sys, target)
}

func (replicationLag) Heal(ctx context.Context, sys System, target string) (string, error) {
	seen := replicasSeenNow(ctx, sys, target)
	if err := healLag(ctx, sys); err != nil {
		return "", err
	}
	return "before the heal: " + seen + "; stream let through", nil
}

type laggingMasterKill struct{ onOwnHosts }

func (laggingMasterKill) Name() string { return LaggingMasterKill }

// Applies: lagApplies, and not a lock that confirms every grant with a
// replica (impls.Backend.Replicas, a WAIT): the lag starts before the first
// grant and holds every replica back for the run, so its WAIT times out on
// every grant, it gives each back, and no holder is ever inside its
// section for the kill to strike (seen: explore's opening on
// redis-setnx-px-wait-all, "worker 0 did not reach failpoint
// in-critical-section within 35s"). Refused here, the matrix's
// master-kill-under-lag and explore's draw ask the same question.
func (laggingMasterKill) Applies(spec impls.Spec, topo Topology) error {
	if err := lagApplies(spec, topo); err != nil {
		return err
	}
	if spec.Backend.Replicas {
		return errors.New("the lock confirms every grant with a replica (WAIT), which a replica held back for the run never does in time: " +
			"every grant is given back and no holder is inside its section when the master dies")
	}
	return nil
}

func (laggingMasterKill) Targets(topo Topology) []string { return []string{MasterTarget} }

// Settle starts the lag before any client is granted the lock, so every
// grant and fencing token of the run is written on the master and held
// back from its replicas.
func (laggingMasterKill) Settle(ctx context.Context, sys System, target string) (string, error) {
	name := target
	if role, ok := RoleOf(target); ok {
		var err error
		if name, err = sys.ServerWithRole(ctx, role); err != nil {
			return "", err
		}
	}
	return holdBack(ctx, sys, name)
}

// Inject reads how far behind each replica is, then kills the master: the
// record shows the master's offset, each replica's own processed offset
// (slave_repl_offset) right after the kill, which is what a promotion
// starts from, and the master's offset when the lag began.
func (laggingMasterKill) Inject(ctx context.Context, sys System, target string) (string, error) {
	master, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	mr, err := readReplication(ctx, master)
	if err != nil {
		return "", fmt.Errorf("%s: %w", LaggingMasterKill, err)
	}
	replicas, err := replicasOf(sys, mr)
	if err != nil {
		return "", fmt.Errorf("%s: %w", LaggingMasterKill, err)
	}
	markStrike(ctx, master, replicas)
	if err := master.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", target, err)
	}
	start, lagging := lagStart(master)
	var b strings.Builder
	fmt.Fprintf(&b, "%s master_repl_offset %d", master.Name, mr.Offset)
	if lagging {
		fmt.Fprintf(&b, " (%d when the lag began)", start)
	} else {
		b.WriteString(" (no lag holds it back now: it began on another master, or an earlier heal in the run ended it)")
	}
	for _, r := range replicas {
		rr, err := readReplication(ctx, r)
		if err != nil {
			fmt.Fprintf(&b, "; %s unread: %v", r.Name, err)
			continue
		}
		fmt.Fprintf(&b, "; %s slave_repl_offset %d, %d bytes behind", r.Name, rr.ReplicaOffset, mr.Offset-rr.ReplicaOffset)
		if lagging && rr.ReplicaOffset <= start {
			b.WriteString(", nothing written since the lag began")
		}
	}
	b.WriteString("; SIGKILL " + master.Name)
	return b.String(), nil
}

// Heal says what each replica is now (the promoted one a master, before
// the held packets could reach it), ends the lag, and restarts the old
// master as server-kill does.
func (laggingMasterKill) Heal(ctx context.Context, sys System, target string) (string, error) {
	master, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	markPromotedAmong(ctx, sys, master)
	var seen []string
	for _, r := range lagReplicas(master) {
		rr, err := readReplication(ctx, r)
		if err != nil {
			seen = append(seen, fmt.Sprintf("%s unread: %v", r.Name, err))
			continue
		}
		seen = append(seen, fmt.Sprintf("%s %s at %d", r.Name, rr.Role, rr.Offset))
	}
	if err := healLag(ctx, sys); err != nil {
		return "", err
	}
	if err := master.Restart(ctx, true); err != nil {
		return "", fmt.Errorf("restart %s: %w", target, err)
	}
	note := "restarted with its data"
	if cluster.KeepsNoData(master.Kind) {
		note = "restarted with its data dir (no persistence: empty)"
	}
	return fmt.Sprintf("before the heal: %s; lag ended; %s %s", strings.Join(seen, ", "), master.Name, note), nil
}

// lags remembers, per master a lag holds back, its replicas and its offset
// when the lag began, for the kill's and the heal's records. Keyed by the
// run's own node, so runs side by side in one process never meet.
var lags = struct {
	sync.Mutex
	m map[*cluster.Node]lagged
}{m: map[*cluster.Node]lagged{}}

type lagged struct {
	start    int64
	replicas []*cluster.Node
}

func lagStart(master *cluster.Node) (int64, bool) {
	lags.Lock()
	defer lags.Unlock()
	l, ok := lags.m[master]
	return l.start, ok
}

func lagReplicas(master *cluster.Node) []*cluster.Node {
	lags.Lock()
	defer lags.Unlock()
	return lags.m[master].replicas
}

// holdBack holds the replication stream of the master called name back
// from each of its replicas, and says from which offset.
func holdBack(ctx context.Context, sys System, name string) (string, error) {
	master, err := sys.Server(name)
	if err != nil {
		return "", err
	}
	if master.Host == nil {
		return "", fmt.Errorf("%s runs on no host of the lab's own, so its replication link cannot be held back", name)
	}
	mr, err := readReplication(ctx, master)
	if err != nil {
		return "", err
	}
	// A master demoted or just restarted by an earlier fault is a state
	// the servers leave again (ErrNotNow), not a wrong step.
	if mr.Role != "master" {
		return "", fmt.Errorf("%s is a %s, not a master with replicas: %w", name, mr.Role, ErrNotNow)
	}
	replicas, err := replicasOf(sys, mr)
	if err != nil {
		return "", err
	}
	if len(replicas) == 0 {
		return "", fmt.Errorf("%s has no replica connected (%s): %w", name, replicasSeen(mr.Replicas), ErrNotNow)
	}
	_, port, err := splitPort(master.Addr)
	if err != nil {
		return "", err
	}
	var names []string
	for _, r := range replicas {
		if err := netfault.DelayFromPort(ctx, r.Host, []*hosts.Host{master.Host}, port, LagBehind, 0); err != nil {
			healLag(context.WithoutCancel(ctx), sys)
			return "", fmt.Errorf("hold back %s's stream to %s: %w", name, r.Name, err)
		}
		names = append(names, r.Name)
	}
	lags.Lock()
	lags.m[master] = lagged{start: mr.Offset, replicas: replicas}
	lags.Unlock()
	return fmt.Sprintf("replication stream of %s (port %d) to %s held back %v from master_repl_offset %d (acknowledged: %s)",
		name, port, strings.Join(names, ", "), LagBehind, mr.Offset, replicasSeen(mr.Replicas)), nil
}

// replicasSeenNow says, for the master called name, its offset and each
// replica's own offset, as the plain lag's heal records them.
func replicasSeenNow(ctx context.Context, sys System, name string) string {
	master, err := sys.Server(name)
	if err != nil {
		return err.Error()
	}
	mr, err := readReplication(ctx, master)
	if err != nil {
		return err.Error()
	}
	parts := []string{fmt.Sprintf("%s master_repl_offset %d", name, mr.Offset)}
	for _, r := range lagReplicas(master) {
		rr, err := readReplication(ctx, r)
		if err != nil {
			parts = append(parts, fmt.Sprintf("%s unread: %v", r.Name, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s slave_repl_offset %d, %d bytes behind", r.Name, rr.ReplicaOffset, mr.Offset-rr.ReplicaOffset))
	}
	return strings.Join(parts, "; ")
}

// healLag ends every lag on the run's lock servers' hosts (a host with
// none is left as it was) and forgets the run's lagged masters. The
// packets still held are let through, as a link that catches up.
func healLag(ctx context.Context, sys System) error { return endLag(ctx, sys, netfault.Heal) }

// dropLag is healLag after the master died: the packets still held are
// dropped, as they would have been on their way from a dead server (they
// belong to a connection the promotion closed), and the heal does not
// wait out the lag for them.
func dropLag(ctx context.Context, sys System) error { return endLag(ctx, sys, netfault.HealDropping) }

func endLag(ctx context.Context, sys System, heal func(context.Context, ...*hosts.Host) error) error {
	var hs []*hosts.Host
	var nodes []*cluster.Node
	for _, name := range sys.LockServers() {
		h, err := sys.ServerHost(name)
		if err != nil {
			return err
		}
		hs = append(hs, h)
		if n, err := sys.Server(name); err == nil {
			nodes = append(nodes, n)
		}
	}
	lags.Lock()
	for _, n := range nodes {
		delete(lags.m, n)
	}
	lags.Unlock()
	if err := heal(ctx, hs...); err != nil {
		return fmt.Errorf("end the replication lag: %w", err)
	}
	return nil
}

// replicasOf finds the lock servers a master's INFO replication names as
// its replicas, by their hosts' addresses.
func replicasOf(sys System, mr cluster.Replication) ([]*cluster.Node, error) {
	var out []*cluster.Node
	for _, a := range mr.Replicas {
		if n, ok := serverWithAddr(sys, a.Addr); ok {
			out = append(out, n)
			continue
		}
		ip, _, err := splitPort(a.Addr)
		if err != nil {
			return nil, err
		}
		n, err := serverAt(sys, ip)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// serverWithAddr is the lock server listening on addr (ip:port), as
// servers off the lab's hosts all share 127.0.0.1 and differ by port.
func serverWithAddr(sys System, addr string) (*cluster.Node, bool) {
	for _, name := range sys.LockServers() {
		if n, err := sys.Server(name); err == nil && n.Addr == addr {
			return n, true
		}
	}
	return nil, false
}

// serverAt is the lock server whose host has address ip.
func serverAt(sys System, ip netip.Addr) (*cluster.Node, error) {
	for _, name := range sys.LockServers() {
		n, err := sys.Server(name)
		if err != nil {
			return nil, err
		}
		if n.Host != nil && n.Host.IP == ip {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no lock server's host has address %s", ip)
}

func splitPort(addr string) (netip.Addr, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("address %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("address %q: %w", addr, err)
	}
	return ip, port, nil
}

// readReplication reads INFO replication on n once.
func readReplication(ctx context.Context, n *cluster.Node) (cluster.Replication, error) {
	w, err := cluster.WatchReplication(n)
	if err != nil {
		return cluster.Replication{}, err
	}
	defer w.Close()
	return w.Read(ctx)
}
