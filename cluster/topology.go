package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
)

// Needs says which servers a run uses.
type Needs struct {
	RedisNodes int  // independent Redis lock nodes
	Replica    bool // a replica of the first Redis node (fail-over scenarios)
	ZooKeeper  bool
	Postgres   bool
	// Resource is the Redis node holding the protected counter, never a lock node.
	Resource bool
	// ZooKeeperTick overrides ZooKeeper's tickTime (default 100ms).
	ZooKeeperTick time.Duration
	// ClockShift starts the Redis lock nodes with a movable wall clock.
	ClockShift bool
	// Hosts starts every server on a host of its own (a network namespace
	// named after the node, see cluster/hosts), so network faults can drop
	// packets between servers and the clients, which must then run on
	// hosts of the same network too (Topology.Net).
	Hosts bool
}

// Merge returns needs covering both.
func (n Needs) Merge(o Needs) Needs {
	if o.RedisNodes > n.RedisNodes {
		n.RedisNodes = o.RedisNodes
	}
	n.Replica = n.Replica || o.Replica
	n.ZooKeeper = n.ZooKeeper || o.ZooKeeper
	n.Postgres = n.Postgres || o.Postgres
	n.Resource = n.Resource || o.Resource
	if o.ZooKeeperTick != 0 {
		n.ZooKeeperTick = o.ZooKeeperTick
	}
	n.ClockShift = n.ClockShift || o.ClockShift
	n.Hosts = n.Hosts || o.Hosts
	return n
}

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

	// Net is the run's hosts when Needs.Hosts asked for them, else nil.
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

// Start starts what needs asks for, using ext's addresses where given.
// On error every server already started is stopped.
func Start(ctx context.Context, needs Needs, ext External) (t *Topology, err error) {
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
	// Every start removes what a SIGKILLed run left on hosts, whether or not
	// this run uses hosts (hosts.New does the same); without root there is
	// nothing the lab could have made, so an error here is ignored.
	_ = hosts.Sweep(ctx)
	if needs.Hosts {
		if ext.Any() {
			return nil, errors.New("servers on hosts are the lab's own; external servers cannot be put on them")
		}
		if t.Net, err = hosts.New(ctx); err != nil {
			return nil, err
		}
	}
	add := func(n *Node, e error) (*Node, error) {
		if e != nil {
			return nil, e
		}
		t.started = append(t.started, n)
		return n, nil
	}
	if needs.RedisNodes > 0 {
		if len(ext.Redis) > 0 {
			if len(ext.Redis) < needs.RedisNodes {
				return nil, fmt.Errorf("this run needs %d independent Redis nodes, but %d addresses were given", needs.RedisNodes, len(ext.Redis))
			}
			t.RedisAddrs = ext.Redis[:needs.RedisNodes]
		} else {
			for i := 1; i <= needs.RedisNodes; i++ {
				name := fmt.Sprintf("redis-%d", i)
				h, err := t.host(ctx, name)
				if err != nil {
					return nil, err
				}
				n, err := add(StartRedis(ctx, RedisOptions{Name: name, ClockShift: needs.ClockShift, Host: h}))
				if err != nil {
					return nil, err
				}
				t.Redis = append(t.Redis, n)
				t.RedisAddrs = append(t.RedisAddrs, n.Addr)
			}
		}
	}
	if needs.Replica {
		if len(t.Redis) == 0 {
			return nil, errors.New("a replica needs a Redis master started by the lab (external servers cannot be failed over)")
		}
		h, err := t.host(ctx, "redis-replica")
		if err != nil {
			return nil, err
		}
		n, err := add(StartRedis(ctx, RedisOptions{Name: "redis-replica", ReplicaOf: t.Redis[0], Host: h}))
		if err != nil {
			return nil, err
		}
		t.Replica = n
	}
	if needs.Resource {
		if ext.Resource != "" {
			t.ResourceAddr = ext.Resource
		} else {
			h, err := t.host(ctx, "resource")
			if err != nil {
				return nil, err
			}
			n, err := add(StartRedis(ctx, RedisOptions{Name: "resource", Host: h}))
			if err != nil {
				return nil, err
			}
			t.Resource = n
			t.ResourceAddr = n.Addr
		}
	}
	if needs.ZooKeeper {
		if len(ext.ZooKeeper) > 0 {
			t.ZooKeeperAddr = ext.ZooKeeper
		} else {
			h, err := t.host(ctx, "zookeeper")
			if err != nil {
				return nil, err
			}
			n, err := add(StartZooKeeper(ctx, ZooKeeperOptions{TickTime: needs.ZooKeeperTick, Host: h}))
			if err != nil {
				return nil, err
			}
			t.ZooKeeper = n
			t.ZooKeeperAddr = []string{n.Addr}
		}
	}
	if needs.Postgres {
		if ext.Postgres != "" {
			t.PostgresDSN = ext.Postgres
		} else {
			h, err := t.host(ctx, "postgres")
			if err != nil {
				return nil, err
			}
			n, err := add(StartPostgres(ctx, PostgresOptions{Host: h}))
			if err != nil {
				return nil, err
			}
			t.Postgres = n
			t.PostgresDSN = n.DSN()
		}
	}
	return t, nil
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
