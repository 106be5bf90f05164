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
	// Lock is the user's lock servers by kind (independent Redis nodes, a
	// ZooKeeper or etcd ensemble, a PostgreSQL or MySQL DSN): every kind
	// whose OwnServers allows it.
	Lock     topology.Endpoints
	Resource string // the protected counter's Redis
}

// OwnServers is how a user points the lab at servers of one kind they
// already run: a command-line flag and an environment variable, each a
// comma-separated list of addresses (or a DSN).
type OwnServers struct {
	Flag, Env, Usage string
	// Independent says the addresses are independent nodes, of which a
	// lock takes as many as it needs (Redlock's); otherwise they are one
	// system reached through any of them (an ensemble's members).
	Independent bool
	// None says why the kind's servers cannot be the user's own ("" when
	// they can): the lab must start them, to know or move their roles.
	None string
}

// OwnKinds are the server kinds a user can run themselves, by name.
func OwnKinds() []ServerKind {
	var out []ServerKind
	for _, name := range KindNames() {
		k, err := KindOf(topology.Kind(name))
		if err == nil && k.OwnServers().None == "" {
			out = append(out, k)
		}
	}
	return out
}

// ExternalFromEnv reads LOCKLAB_RESOURCE_ADDR and every own-servers kind's
// variable (OwnServers.Env: LOCKLAB_REDIS_ADDRS, LOCKLAB_ZK_ADDRS,
// LOCKLAB_PG_DSN, ...), comma-separated.
func ExternalFromEnv() External {
	e := External{Lock: topology.Endpoints{}, Resource: strings.TrimSpace(os.Getenv("LOCKLAB_RESOURCE_ADDR"))}
	for _, k := range OwnKinds() {
		e.Own(k.Kind(), SplitList(os.Getenv(k.OwnServers().Env)))
	}
	return e
}

// Own records addrs as the user's servers of kind (nothing when empty).
func (e External) Own(kind topology.Kind, addrs []string) {
	if len(addrs) > 0 {
		e.Lock[kind] = topology.Endpoint{Kind: kind, Addrs: addrs}
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
func (e External) Any() bool { return len(e.Lock) > 0 || e.Resource != "" }

// Topology is the set of servers of one run: the nodes the lab started (whose
// faults it can inject) and the endpoints clients use.
type Topology struct {
	// Replica is the Redis replica a scripted fail-over promotes, if declared.
	Replica  *Node
	Resource *Node
	// ResourceAddr is the protected counter's address.
	ResourceAddr string

	// Net is the run's hosts when the declaration asked for them, else nil.
	Net *hosts.Network

	lock      map[Kind][]*Node
	endpoints topology.Endpoints
	started   []*Node
}

// Lock returns the lock nodes of kind the lab started, in declaration
// order (none when the user's servers stand in for them).
func (t *Topology) Lock(kind Kind) []*Node { return t.lock[kind] }

// Endpoints are what lock clients are given: every lock kind's addresses.
func (t *Topology) Endpoints() topology.Endpoints { return t.endpoints }

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
// given (a lock kind's servers, the resource). Each group is started by its
// kind (ServerKind.Start), its members' hosts and addresses fixed first. On
// error every server already started is stopped.
func Start(ctx context.Context, decl topology.Declaration, ext External) (t *Topology, err error) {
	if err := decl.Validate(); err != nil {
		return nil, err
	}
	// Every error return sets t to nil, so the deferred cleanup keeps its own
	// handle on what was started.
	started := &Topology{lock: map[Kind][]*Node{}, endpoints: topology.Endpoints{}}
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
	// And every process that starts servers keeps the promise for its own
	// on Ctrl-C or SIGTERM, a test binary too: an interrupted CI run once
	// left the engine tests' run and resource dirs behind, as only the
	// lab's command installed the handler.
	StopOnSignal()
	if decl.Hosts {
		if ext.Any() {
			return nil, errors.New("servers on hosts are the lab's own; external servers cannot be put on them")
		}
		if t.Net, err = hosts.New(ctx); err != nil {
			return nil, err
		}
	}
	for _, g := range decl.Groups {
		if err := t.startGroup(ctx, g, decl.Members(g.Name), ext); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// startGroup starts one declared group through its kind, or takes the
// user's servers for it.
func (t *Topology) startGroup(ctx context.Context, g topology.Group, nodes []topology.Node, ext External) error {
	if g.Role == topology.Resource && ext.Resource != "" {
		t.ResourceAddr = ext.Resource
		return nil
	}
	if ep, ok := ext.Lock[g.Kind]; ok && g.Role == topology.Lock {
		if len(ep.Addrs) < len(nodes) {
			return fmt.Errorf("this run needs %d %s servers, but %d addresses were given", len(nodes), g.Kind, len(ep.Addrs))
		}
		if k, err := KindOf(g.Kind); err == nil && !g.Ensemble && k.OwnServers().Independent {
			ep.Addrs = ep.Addrs[:len(nodes)]
		}
		t.endpoints[g.Kind] = ep
		return nil
	}
	kind, err := KindOf(g.Kind)
	if err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	members := make([]Member, len(nodes))
	for i, d := range nodes {
		h, err := t.host(ctx, d.Name)
		if err != nil {
			return err
		}
		bind, port, err := listen(h)
		if err != nil {
			return err
		}
		members[i] = Member{Node: d, Host: h, Bind: bind, Port: port}
		// A replica's master, or the master a sentinel monitors.
		if d.ReplicaOf != "" {
			if members[i].ReplicaOf = t.Node(d.ReplicaOf); members[i].ReplicaOf == nil {
				return fmt.Errorf("%s needs its master %s started by the lab (external servers cannot be failed over)", d.Name, d.ReplicaOf)
			}
		}
	}
	for i := range members {
		for j := range members {
			members[i].Peers = append(members[i].Peers, &members[j])
		}
	}
	started, err := kind.Start(ctx, members)
	if err != nil {
		return err
	}
	t.started = append(t.started, started...)
	switch g.Role {
	case topology.Resource:
		t.Resource, t.ResourceAddr = started[0], started[0].Addr
	case topology.Replica:
		t.Replica = started[0]
	default:
		t.lock[g.Kind] = append(t.lock[g.Kind], started...)
		// Keyed by the endpoint's kind, not the group's: a Sentinel group
		// is how clients reach the Redis lock servers (its endpoint is
		// Redis via sentinel), and it replaces the master's plain one,
		// declared before it.
		ep := kind.Endpoint(t.lock[g.Kind])
		t.endpoints[ep.Kind] = ep
	}
	return nil
}

// Role asks node name's kind what the node is now (leader, follower,
// master, replica).
func (t *Topology) Role(ctx context.Context, name string) (string, error) {
	n := t.Node(name)
	if n == nil {
		return "", fmt.Errorf("no server %q in this run", name)
	}
	kind, err := KindOf(n.Kind)
	if err != nil {
		return "", err
	}
	return kind.Role(ctx, n)
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
