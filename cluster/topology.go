package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/topology"
)

// External holds addresses of servers the user runs, in place of starting them.
// Empty fields mean "start it here".
type External struct {
	Redis     []string // independent lock nodes
	Resource  string   // the protected counter's Redis
	ZooKeeper []string
	Postgres  string // DSN
}

// ExternalFromEnv reads LOCKLAB_REDIS_ADDRS, LOCKLAB_RESOURCE_ADDR,
// LOCKLAB_ZK_ADDRS (comma-separated host:port) and LOCKLAB_PG_DSN.
func ExternalFromEnv() External {
	return External{
		Redis:     SplitList(os.Getenv("LOCKLAB_REDIS_ADDRS")),
		Resource:  strings.TrimSpace(os.Getenv("LOCKLAB_RESOURCE_ADDR")),
		ZooKeeper: SplitList(os.Getenv("LOCKLAB_ZK_ADDRS")),
		Postgres:  strings.TrimSpace(os.Getenv("LOCKLAB_PG_DSN")),
	}
}

// SplitList parses a comma-separated list (addresses, page names), trimming
// spaces and dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Any reports whether any external server was given.
func (e External) Any() bool {
	return len(e.Redis) > 0 || e.Resource != "" || len(e.ZooKeeper) > 0 || e.Postgres != ""
}

// Topology is the set of servers of one run: the nodes the lab started (whose
// faults it can inject) and the addresses clients use.
type Topology struct {
	Redis     []*Node // lock nodes the lab started; nil entries when external
	Replica   *Node
	Resource  *Node
	ZooKeeper *Node
	Postgres  *Node

	RedisAddrs    []string
	ResourceAddr  string
	ZooKeeperAddr []string
	PostgresDSN   string

	// Net is the run's hosts when the declaration asked for them, else nil.
	Net *hosts.Network

	started []*Node
}

// Dialer is how the lab itself (not a client) reaches the servers: from the
// hosts' switch when they run on hosts, else nil (the default dialer).
func (t *Topology) Dialer() Dialer {
	if t.Net == nil {
		return nil
	}
	return t.Net.DialContext
}

// host returns a new host for the node named name, or nil without hosts.
func (t *Topology) host(ctx context.Context, name string) (*hosts.Host, error) {
	if t.Net == nil {
		return nil, nil
	}
	return t.Net.AddHost(ctx, name)
}

// Start starts the servers decl declares, using ext's addresses where
// given (a lock group's nodes, the resource, ZooKeeper, PostgreSQL). On
// error every server already started is stopped.
func Start(ctx context.Context, decl topology.Declaration, ext External) (t *Topology, err error) {
	if err := decl.Validate(); err != nil {
		return nil, err
	}
	// Every error return sets t to nil, so the deferred cleanup keeps its own
	// handle on what was started.
	started := &Topology{}
	t = started
	defer func() {
		if err != nil {
			started.Close()
			t = nil
		}
	}()
	// Every start removes what SIGKILLed runs left (temp dirs, hosts,
	// containers: package leftovers), whether or not this run uses them.
	// A leftover that cannot be removed (no root for a namespace) is no
	// reason to refuse this run, so an error here is ignored.
	_ = leftovers.Sweep(ctx)
	if decl.Hosts {
		if ext.Any() {
			return nil, errors.New("servers on hosts are the lab's own; external servers cannot be put on them")
		}
		if t.Net, err = hosts.New(ctx); err != nil {
			return nil, err
		}
	}
	if g, ok := decl.Group(string(topology.Redis)); ok && g.Role == topology.Lock && len(ext.Redis) > 0 {
		if len(ext.Redis) < g.Count {
			return nil, fmt.Errorf("this run needs %d independent Redis nodes, but %d addresses were given", g.Count, len(ext.Redis))
		}
		t.RedisAddrs = ext.Redis[:g.Count]
	}
	for _, d := range decl.Nodes() {
		if err := t.start(ctx, d, ext); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// start starts one declared node, or takes the user's server for it.
func (t *Topology) start(ctx context.Context, d topology.Node, ext External) error {
	external := false
	switch {
	case d.Role == topology.Lock && d.Kind == topology.Redis:
		external = len(ext.Redis) > 0
	case d.Role == topology.Resource:
		if external = ext.Resource != ""; external {
			t.ResourceAddr = ext.Resource
		}
	case d.Kind == topology.ZooKeeper:
		if external = len(ext.ZooKeeper) > 0; external {
			t.ZooKeeperAddr = ext.ZooKeeper
		}
	case d.Kind == topology.Postgres:
		if external = ext.Postgres != ""; external {
			t.PostgresDSN = ext.Postgres
		}
	}
	if external {
		return nil
	}
	h, err := t.host(ctx, d.Name)
	if err != nil {
		return err
	}
	var n *Node
	switch d.Kind {
	case topology.Redis:
		opts := RedisOptions{Name: d.Name, ClockShift: d.ClockShift, Host: h}
		if d.Role == topology.Replica {
			if opts.ReplicaOf = t.Node(d.ReplicaOf); opts.ReplicaOf == nil {
				return fmt.Errorf("replica %s needs its master %s started by the lab (external servers cannot be failed over)", d.Name, d.ReplicaOf)
			}
		}
		n, err = StartRedis(ctx, opts)
	case topology.ZooKeeper:
		n, err = StartZooKeeper(ctx, ZooKeeperOptions{Name: d.Name, TickTime: d.TickTime, Host: h})
	case topology.Postgres:
		n, err = StartPostgres(ctx, PostgresOptions{Name: d.Name, Host: h})
	default:
		return fmt.Errorf("topology: no server of kind %q", d.Kind)
	}
	if err != nil {
		return err
	}
	t.started = append(t.started, n)
	switch {
	case d.Role == topology.Resource:
		t.Resource, t.ResourceAddr = n, n.Addr
	case d.Role == topology.Replica:
		t.Replica = n
	case d.Kind == topology.Redis:
		t.Redis = append(t.Redis, n)
		t.RedisAddrs = append(t.RedisAddrs, n.Addr)
	case d.Kind == topology.ZooKeeper:
		t.ZooKeeper, t.ZooKeeperAddr = n, []string{n.Addr}
	case d.Kind == topology.Postgres:
		t.Postgres, t.PostgresDSN = n, n.DSN()
	}
	return nil
}

// Nodes returns every node the lab started for this topology.
func (t *Topology) Nodes() []*Node { return t.started }

// Node returns the started node with the given name, or nil.
func (t *Topology) Node(name string) *Node {
	for _, n := range t.started {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Close stops every server the lab started for this topology and removes its dir.
func (t *Topology) Close() {
	for _, n := range t.started {
		n.Stop()
	}
	t.started = nil
	if t.Net != nil {
		// Client workers on the hosts are killed with them.
		_ = t.Net.Close()
		t.Net = nil
	}
}
