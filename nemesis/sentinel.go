package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
)

// MasterTarget names no server but whichever Redis server is the master
// when the fault strikes (a Sentinel group's master moves with every
// fail-over); the engine asks the servers (INFO replication's role) and
// the history records which node it was.
const MasterTarget = "master"

// IsolatedSentinel is the sentinel sentinel-isolated cuts off: the first
// of the group, which every client asks first for the master.
const IsolatedSentinel = "sentinel-1"

// NetSplitWithHolder cuts one lock server together with the holder off
// every other lock server and every other client, both ways, packets
// dropped: the split a Sentinel group fails over under, with the holder
// on the old master's side. Its target is a Link from the holder to the
// server (the engine makes it from the step's holder and its server,
// often MasterTarget, resolved when it strikes). Neither side loses the
// protected resource, so the holder cut off with the old master can still
// write.
const NetSplitWithHolder = "net-split-with-holder"

func init() { register(splitWithHolder{}) }

// WithHolder reports whether a kind's target is a link from the step's
// holder to the server it aims at, which the engine makes when it strikes.
func WithHolder(kind string) bool { return kind == NetSplitWithHolder || goesWithHolder(kind) }

type splitWithHolder struct{ onOwnHosts }

func (splitWithHolder) Name() string { return NetSplitWithHolder }

func (splitWithHolder) Applies(spec impls.Spec, topo Topology) error {
	if err := onHosts(spec, topo); err != nil {
		return err
	}
	if !topo.Ensemble {
		return errors.New("it splits a group of servers that fail over (a Sentinel group); the lock's servers are independent")
	}
	// Its target is the master, a role only a Sentinel group's Redis
	// servers and a Redis Cluster's have; a quorum's leader is cut off
	// alone (leader-isolated).
	if !hasMaster(topo) {
		return errors.New("it cuts off a Sentinel group's or a Redis Cluster's master with the holder; this ensemble has a leader, not a master")
	}
	return serverApplies(spec, topo)
}

// Targets: the master with the holder; explore draws it as any other.
func (splitWithHolder) Targets(topo Topology) []string { return []string{MasterTarget} }

// sides are the two halves: the server and the holder's host, and every
// other lock server and client.
func (splitWithHolder) sides(sys System, target string) (a, b []*hosts.Host, names string, err error) {
	client, server, ok := SplitLink(target)
	if !ok {
		return nil, nil, "", fmt.Errorf("%s needs a holder@server target, got %q", NetSplitWithHolder, target)
	}
	slot, err := ClientSlot(client)
	if err != nil {
		return nil, nil, "", err
	}
	sh, err := sys.ServerHost(server)
	if err != nil {
		return nil, nil, "", err
	}
	ch, err := sys.ClientHost(slot)
	if err != nil {
		return nil, nil, "", err
	}
	a = []*hosts.Host{sh, ch}
	var other []string
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
	for i := 0; i < sys.Clients(); i++ {
		if i == slot {
			continue
		}
		h, err := sys.ClientHost(i)
		if err != nil {
			return nil, nil, "", err
		}
		b, other = append(b, h), append(other, fmt.Sprintf("client-%d", i))
	}
	return a, b, fmt.Sprintf("%s and %s | %s", server, client, strings.Join(other, ", ")), nil
}

func (k splitWithHolder) Inject(ctx context.Context, sys System, target string) (string, error) {
	a, b, names, err := k.sides(sys, target)
	if err != nil {
		return "", err
	}
	// The master cut off is failed over by its group: what it had
	// written by the cut, and (at the heal) what the replica promoted on
	// the other side had, are recorded as a kill's fail-over is.
	if _, server, ok := SplitLink(target); ok {
		if n, err := sys.Server(server); err == nil {
			markRedisStrike(ctx, sys, n)
		}
	}
	if err := netfault.Partition(ctx, a, b); err != nil {
		netfault.Heal(context.WithoutCancel(ctx), append(a, b...)...)
		return "", fmt.Errorf("%s %s: %w", NetSplitWithHolder, target, err)
	}
	return names + ", packets dropped", nil
}

func (k splitWithHolder) Heal(ctx context.Context, sys System, target string) (string, error) {
	a, b, _, err := k.sides(sys, target)
	if err != nil {
		return "", err
	}
	if _, server, ok := SplitLink(target); ok {
		if n, err := sys.Server(server); err == nil {
			markPromotedAmong(ctx, sys, n)
		}
	}
	if err := netfault.Heal(ctx, append(a, b...)...); err != nil {
		return "", err
	}
	return "healed", nil
}

// IsSentinel reports whether the server called name is a Redis Sentinel
// of the topology: one whose kind directs clients to the servers that
// grant (cluster.Roles.Directs) rather than granting itself.
func (t Topology) IsSentinel(name string) bool {
	return slices.ContainsFunc(t.Servers, func(s Server) bool { return s.Name == name && rolesOf(s.Kind).Directs })
}
