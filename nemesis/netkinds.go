package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
)

// The network fault kinds: packets dropped by the hosts' firewalls
// (faults/netfault), never a reset or closed connection, so a client learns
// of a cut only by timing out, and whatever it sent may or may not have
// arrived. The protected resource stays reachable in every kind but
// net-isolate: a holder cut off its lock can still write.
const (
	NetPartitionClient = "net-partition-client" // a client | every lock server, both ways
	NetOneWayReplies   = "net-oneway-replies"   // lock servers -> a client dropped: requests land, replies vanish
	NetIsolate         = "net-isolate"          // one host (a client or a lock server) cut from every other host
	NetLoss            = "net-loss"             // 30% of the packets between a client and the lock servers lost, both ways
)

// lossPercent is net-loss's rate: enough that most requests need a
// retransmission and some time out, not so much that nothing gets through.
const lossPercent = 30

func init() {
	register(netKind{name: NetPartitionClient, clientOnly: true, inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host) error {
		return netfault.Partition(ctx, []*hosts.Host{c}, servers)
	}})
	register(netKind{name: NetOneWayReplies, clientOnly: true, inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host) error {
		return netfault.OneWay(ctx, servers, []*hosts.Host{c})
	}})
	register(netKind{name: NetLoss, clientOnly: true, inject: func(ctx context.Context, c *hosts.Host, servers []*hosts.Host) error {
		errs := []error{netfault.Lose(ctx, c, servers, lossPercent)}
		for _, s := range servers {
			errs = append(errs, netfault.Lose(ctx, s, []*hosts.Host{c}, lossPercent))
		}
		return errors.Join(errs...)
	}})
	register(netKind{name: NetIsolate, inject: func(ctx context.Context, h *hosts.Host, _ []*hosts.Host) error {
		return netfault.Isolate(ctx, h)
	}})
}

// IsNetwork reports whether a kind needs the run's servers and clients on
// hosts of their own.
func IsNetwork(kind string) bool { return strings.HasPrefix(kind, "net-") }

// netKind is one shape of dropped packets. Its target is a client slot or,
// unless clientOnly, a lock server; inject gets the target's host and
// every lock server's host.
type netKind struct {
	name       string
	clientOnly bool
	inject     func(ctx context.Context, target *hosts.Host, servers []*hosts.Host) error
}

func (k netKind) Name() string { return k.name }

func (k netKind) Applies(spec impls.Spec, topo Topology) error {
	if topo.NoHosts != "" {
		return errors.New(topo.NoHosts)
	}
	if spec.Backend.InProcess || topo.InProcess {
		return errInProcess
	}
	return serverApplies(spec, topo)
}

func (k netKind) Targets(topo Topology) []string {
	out := clientTargets(topo)
	if !k.clientOnly {
		out = append(out, serverTargets(topo)...)
	}
	return out
}

func (k netKind) hosts(sys System, topo []string, target string) (*hosts.Host, []*hosts.Host, error) {
	var servers []*hosts.Host
	for _, name := range topo {
		h, err := sys.ServerHost(name)
		if err != nil {
			return nil, nil, err
		}
		servers = append(servers, h)
	}
	if slot, err := clientSlot(target); err == nil {
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
	if err := k.inject(ctx, h, servers); err != nil {
		netfault.Heal(context.WithoutCancel(ctx), append(servers, h)...)
		return "", fmt.Errorf("%s %s: %w", k.name, target, err)
	}
	return fmt.Sprintf("host %s (%s), packets dropped", h.Name, h.IP), nil
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
