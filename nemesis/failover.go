package nemesis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// FailOver is a single Redis master replaced by its replica: the master is
// SIGKILLed, the replica promoted (REPLICAOF NO ONE), and the master's
// address moved to the replica's host, as keepalived moves a floating IP,
// so clients reconnect to the address they know and reach the new master.
// Whatever the master granted that had not reached the replica is lost.
// The heal only records: the old master stays dead, so a fail-over is a
// schedule's last fault.
const FailOver = "fail-over"

// ReplicaName is the replica a fail-over promotes, as the topology names it.
const ReplicaName = topology.ReplicaName

func init() { register(failOver{}) }

type failOver struct{}

func (failOver) Name() string     { return FailOver }
func (failOver) PromotesReplica() {}

// Shape: the master's address moves between hosts, to the replica the
// fail-over promotes, which the lock alone does not declare.
func (failOver) Shape(d topology.Declaration) topology.Declaration {
	d.Hosts = true
	if lock := d.Names(topology.Lock); len(lock) > 0 {
		d = d.Merge(topology.Of(topology.ReplicaOf(lock[0])))
	}
	return d
}

func (failOver) Applies(spec impls.Spec, topo Topology) error {
	if _, ok := scriptedFailover(spec.Backend.Kind); !ok || spec.Backend.Nodes > 1 || spec.Backend.InProcess {
		return fmt.Errorf("a fail-over promotes the replica of a single Redis server, and %s does not run on one", spec.Name)
	}
	if topo.NoHosts != "" {
		return fmt.Errorf("the master's address moves between hosts of the lab's own: %s", topo.NoHosts)
	}
	if !topo.Replica {
		return errors.New("the topology has no replica to promote (only a schedule, or an exploration, that names fail-over starts one)")
	}
	return nil
}

func (failOver) Targets(topo Topology) []string {
	for _, s := range topo.Servers {
		if _, ok := scriptedFailover(s.Kind); ok {
			return []string{s.Name}
		}
	}
	return nil
}

func (failOver) Inject(ctx context.Context, sys System, target string) (string, error) {
	master, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	replica, err := sys.Server(ReplicaName)
	if err != nil {
		return "", err
	}
	if master.Host == nil || replica.Host == nil {
		return "", errors.New("fail-over: the master and its replica must run on hosts of their own")
	}
	markStrike(ctx, master, []*cluster.Node{replica})
	if err := master.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", target, err)
	}
	promoter, ok := scriptedFailover(master.Kind)
	if !ok {
		return "", fmt.Errorf("fail-over: the lab cannot promote a %s replica by script", master.Kind.Title())
	}
	if err := promoter.PromoteReplica(ctx, replica); err != nil {
		return "", err
	}
	markPromoted(ctx, master, replica)
	if err := moveAddress(ctx, master, replica); err != nil {
		return "", err
	}
	return fmt.Sprintf("SIGKILL %s; %s promoted; %s now answers on %s's host", target, replica.Name, master.Addr, replica.Name), nil
}

func (failOver) Heal(ctx context.Context, sys System, target string) (string, error) {
	return "old master stays down; clients stay on the promoted replica", nil
}

// scriptedFailover is kind's server kind when the lab can replace its lone
// server by its replica by script (cluster.ScriptedFailover), else false.
func scriptedFailover(kind topology.Kind) (cluster.ScriptedFailover, bool) {
	k, err := cluster.KindOf(kind)
	if err != nil {
		return nil, false
	}
	f, ok := k.(cluster.ScriptedFailover)
	return f, ok
}

// moveAddress takes the dead master's address off its host and gives it to
// the replica's, where a DNAT rule sends the master's port to the
// replica's (each server listens on a port of its own). Every host then
// forgets the address's old link-layer owner, as a gratuitous ARP from the
// new owner would make it. A client's open connection to the old master
// now meets a host with no such connection and is reset, so it reconnects,
// to the replica.
func moveAddress(ctx context.Context, master, replica *cluster.Node) error {
	from, err := netip.ParseAddrPort(master.Addr)
	if err != nil {
		return fmt.Errorf("master address %q: %w", master.Addr, err)
	}
	to, err := netip.ParseAddrPort(replica.Addr)
	if err != nil {
		return fmt.Errorf("replica address %q: %w", replica.Addr, err)
	}
	prefix, err := netip.ParsePrefix(hosts.Subnet)
	if err != nil {
		return err
	}
	cidr := from.Addr().String() + "/" + strconv.Itoa(prefix.Bits())
	steps := []struct {
		h    *hosts.Host
		tool string
		args []string
	}{
		{master.Host, "ip", []string{"addr", "del", cidr, "dev", hosts.Dev}},
		{replica.Host, "ip", []string{"addr", "add", cidr, "dev", hosts.Dev}},
		{replica.Host, "iptables", []string{"-w", "-t", "nat", "-A", "PREROUTING", "-d", from.Addr().String(), "-p", "tcp",
			"--dport", strconv.Itoa(int(from.Port())), "-m", "comment", "--comment", "locklab fail-over",
			"-j", "DNAT", "--to-destination", net.JoinHostPort(to.Addr().String(), strconv.Itoa(int(to.Port())))}},
	}
	for _, st := range steps {
		if err := st.h.Run(ctx, st.tool, st.args...); err != nil {
			return fmt.Errorf("move %s to %s: %w", from.Addr(), replica.Host.Name, err)
		}
	}
	for _, h := range replica.Host.Network().Hosts() {
		if h == replica.Host || h == master.Host {
			continue
		}
		if err := h.Run(ctx, "ip", "neigh", "flush", "to", from.Addr().String()); err != nil {
			return fmt.Errorf("move %s: forget its old owner on %s: %w", from.Addr(), h.Name, err)
		}
	}
	return nil
}
