package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/quorum"
)

// The network fault kinds: packets dropped or held by the hosts' firewalls
// (faults/netfault), never a reset or closed connection, so a client learns
// of a cut only by timing out, and whatever it sent may or may not have
// arrived. The protected resource stays reachable in every kind but
// net-isolate: a holder cut off its lock can still write.
const (
	NetPartitionClient = "net-partition-client" // a client | every lock server, both ways
	NetOneWayReplies   = "net-oneway-replies"   // lock servers -> a client dropped: requests land, replies vanish
	NetIsolate         = "net-isolate"          // one host (a client or a lock server) cut from every other host
	NetLoss            = "net-loss"             // 30% of the packets between a client and the lock servers lost, both ways
	NetDelay           = "net-delay"            // every packet between a client and the lock servers held TTL/8 ± TTL/16, both ways
	NetPartitionNodes  = "net-partition-nodes"  // every client | some of a multi-node lock's servers, both ways
)

// lossPercent is net-loss's rate: enough that most requests need a
// retransmission and some time out, not so much that nothing gets through.
const lossPercent = 30

// delayOf is net-delay's delay and jitter for a lease of ttl: an eighth of
// the lease each way, give or take a sixteenth, so a round trip takes an
// eighth to three eighths of a lease. That is a slow link, not a dead one
// (net-partition-client is the dead one): the lab's Redis clients wait a
// quarter of the lease for a reply (redisclient.Options), so about
// half their requests are answered, late, and the rest time out after they
// may well have landed, leaving a grant or a release whose outcome the
// client cannot know. A delay past the clients' wait would only turn every
// request into a timeout, and every dial too, as a cut does. A ZooKeeper
// client waits two thirds of its session, so it stays connected, slowly.
func delayOf(ttl time.Duration) (d, jitter time.Duration) { return ttl / 8, ttl / 16 }

func init() {
	register(netKind{name: NetPartitionClient, clientOnly: true, inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host, _ time.Duration) error {
		return netfault.Partition(ctx, []*hosts.Host{c}, servers)
	}})
	register(netKind{name: NetOneWayReplies, clientOnly: true, inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host, _ time.Duration) error {
		return netfault.OneWay(ctx, servers, []*hosts.Host{c})
	}})
	register(netKind{name: NetDelay, clientOnly: true, available: netfault.DelayAvailable,
		inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host, ttl time.Duration) error {
			d, jitter := delayOf(ttl)
			errs := []error{netfault.Delay(ctx, c, servers, d, jitter)}
			for _, s := range servers {
				errs = append(errs, netfault.Delay(ctx, s, []*hosts.Host{c}, d, jitter))
			}
			return errors.Join(errs...)
		},
		done: func(ttl time.Duration) string {
			d, jitter := delayOf(ttl)
			return fmt.Sprintf("packets held %v ± %v each way", d, jitter)
		}})
	register(netKind{name: NetLoss, clientOnly: true, inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host, _ time.Duration) error {
		errs := []error{netfault.Lose(ctx, c, servers, lossPercent)}
		for _, s := range servers {
			errs = append(errs, netfault.Lose(ctx, s, []*hosts.Host{c}, lossPercent))
		}
		return errors.Join(errs...)
	}})
	register(nodesCut{})
	register(netKind{name: NetIsolate, inject: func(ctx context.Context, h *hosts.Host, _ []*hosts.Host, _ time.Duration) error {
		return netfault.Isolate(ctx, h)
	}})
}

// ClientOnly reports whether a network kind strikes a client's packets
// only (never a server's host), so an aim at the holder's server is the
// link from the holder to it.
func ClientOnly(kind string) bool {
	k, ok := kinds[kind].(netKind)
	return ok && k.clientOnly
}

// IsNetwork reports whether a kind needs the run's servers and clients on
// hosts of their own.
func IsNetwork(kind string) bool { return strings.HasPrefix(kind, "net-") }

// netKind is one shape of dropped or held packets. Its target is a client
// slot or, unless clientOnly, a lock server; inject gets the target's host,
// every lock server's host and the run's lease time.
type netKind struct {
	onOwnHosts
	name       string
	clientOnly bool
	inject     func(ctx context.Context, target *hosts.Host, servers []*hosts.Host, ttl time.Duration) error
	// available, if set, says why this kernel cannot carry the kind.
	available func() error
	// done, if set, says what inject did, for the history; else "packets
	// dropped".
	done func(ttl time.Duration) string
}

func (k netKind) Name() string { return k.name }

// onHosts says why no network fault can reach spec's clients on topo: no
// hosts of the lab's own, or clients in one process.
func onHosts(spec impls.Spec, topo Topology) error {
	if topo.NoHosts != "" {
		return errors.New(topo.NoHosts)
	}
	if spec.Backend.InProcess || topo.InProcess {
		return errInProcess
	}
	return nil
}

func (k netKind) Applies(spec impls.Spec, topo Topology) error {
	if err := onHosts(spec, topo); err != nil {
		return err
	}
	if k.available != nil {
		if err := k.available(); err != nil {
			return err
		}
	}
	return serverApplies(spec, topo)
}

func (k netKind) Targets(topo Topology) []string {
	out := clientTargets(topo)
	if !k.clientOnly {
		out = append(out, serverTargets(topo)...)
	} else if topo.Ensemble && k.name == NetPartitionClient && holderHasOneServer(topo) {
		// The holder cut off its own server only (a Link, resolved when
		// it strikes), which an ensemble's other members can replace.
		out = append(out, HolderServerTarget)
	}
	return out
}

func (k netKind) hosts(sys System, topo []string, target string) (*hosts.Host, []*hosts.Host, error) {
	if client, server, ok := SplitLink(target); ok {
		// One link: the client and the one server it is cut off.
		topo, target = []string{server}, client
	}
	var servers []*hosts.Host
	for _, name := range topo {
		h, err := sys.ServerHost(name)
		if err != nil {
			return nil, nil, err
		}
		servers = append(servers, h)
	}
	if slot, err := ClientSlot(target); err == nil {
		h, err := sys.ClientHost(slot)
		return h, servers, err
	}
	h, err := sys.ServerHost(target)
	return h, servers, err
}

func (k netKind) Inject(ctx context.Context, sys System, target string) (string, error) {
	h, servers, err := k.hosts(sys, sys.LockServers(), target)
	if err != nil {
		return "", err
	}
	if err := k.inject(ctx, h, servers, sys.TTL()); err != nil {
		netfault.Heal(context.WithoutCancel(ctx), append(servers, h)...)
		return "", fmt.Errorf("%s %s: %w", k.name, target, err)
	}
	done := "packets dropped"
	if k.done != nil {
		done = k.done(sys.TTL())
	}
	return fmt.Sprintf("host %s (%s), %s", h.Name, h.IP, done), nil
}

func (k netKind) Heal(ctx context.Context, sys System, target string) (string, error) {
	h, servers, err := k.hosts(sys, sys.LockServers(), target)
	if err != nil {
		return "", err
	}
	// Every host of the run: isolate puts rules on all of them.
	all := append(servers, h)
	if k.name == NetIsolate {
		all = h.Network().Hosts()
	}
	if err := netfault.Heal(ctx, all...); err != nil {
		return "", err
	}
	return "healed", nil
}

// nodesCut cuts every client off some of the servers of a lock over
// several independent nodes (Redlock), both ways, packets dropped. Its
// target names the nodes cut, joined by "+" ("redis-4+redis-5"): a cut of
// a minority leaves every client a quorum, a cut of a majority leaves none
// (see CutLeavesQuorum). On a lock with one server it would only repeat
// net-isolate of that server, so it applies to multi-node locks alone.
type nodesCut struct{ onOwnHosts }

func (nodesCut) Name() string { return NetPartitionNodes }

func (nodesCut) Applies(spec impls.Spec, topo Topology) error {
	if err := onHosts(spec, topo); err != nil {
		return err
	}
	if len(topo.Servers) < 3 {
		return fmt.Errorf("%s has fewer than 3 lock servers, so no cut leaves a quorum on one side and not the other (net-isolate cuts a single server)", spec.Name)
	}
	return nil
}

// Targets lists every non-empty set of lock servers, smallest first, each
// set in the servers' order: 31 sets for five nodes.
func (nodesCut) Targets(topo Topology) []string {
	n := len(topo.Servers)
	var sets [][]string
	for mask := 1; mask < 1<<n; mask++ {
		var set []string
		for i, s := range topo.Servers {
			if mask&(1<<i) != 0 {
				set = append(set, s.Name)
			}
		}
		sets = append(sets, set)
	}
	slices.SortStableFunc(sets, func(a, b []string) int { return len(a) - len(b) })
	var out []string
	for _, set := range sets {
		out = append(out, strings.Join(set, "+"))
	}
	return out
}

func (nodesCut) hosts(sys System, target string) (clients, cut []*hosts.Host, err error) {
	for slot := range sys.Clients() {
		h, err := sys.ClientHost(slot)
		if err != nil {
			return nil, nil, err
		}
		clients = append(clients, h)
	}
	for _, name := range strings.Split(target, "+") {
		h, err := sys.ServerHost(name)
		if err != nil {
			return nil, nil, err
		}
		cut = append(cut, h)
	}
	return clients, cut, nil
}

func (k nodesCut) Inject(ctx context.Context, sys System, target string) (string, error) {
	clients, cut, err := k.hosts(sys, target)
	if err != nil {
		return "", err
	}
	if err := netfault.Partition(ctx, clients, cut); err != nil {
		netfault.Heal(context.WithoutCancel(ctx), append(clients, cut...)...)
		return "", fmt.Errorf("%s %s: %w", NetPartitionNodes, target, err)
	}
	left := len(sys.LockServers()) - len(cut)
	return fmt.Sprintf("every client (%d hosts) cut off %s, packets dropped both ways; %d of %d nodes reachable",
		len(clients), strings.ReplaceAll(target, "+", ", "), left, len(sys.LockServers())), nil
}

func (k nodesCut) Heal(ctx context.Context, sys System, target string) (string, error) {
	clients, cut, err := k.hosts(sys, target)
	if err != nil {
		return "", err
	}
	if err := netfault.Heal(ctx, append(clients, cut...)...); err != nil {
		return "", err
	}
	return "healed", nil
}

// CutLeavesQuorum says whether st cuts every client off some of a
// multi-node lock's servers (cut) and, if so, whether the nodes still
// reachable make a majority of all servers, which a lock over
// independent nodes needs to grant (Redlock: quorum.Majority).
func CutLeavesQuorum(st Step, servers int) (cut, leaves bool) {
	if st.Kind != NetPartitionNodes {
		return false, false
	}
	left := servers - len(strings.Split(st.Target, "+"))
	return true, left >= quorum.Majority(servers)
}
