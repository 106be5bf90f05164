// Package nemesis holds the lab's fault kinds, the schedules that say when
// each one strikes, the seeded generator that draws a random schedule, and
// the shrinker that cuts a failing schedule down to a minimal one.
//
// It follows the split of etcd's tests/robustness failpoints: every fault
// kind is a value with a name, a check of whether it applies to a lock and
// a topology (with the reason when it does not), and inject/heal steps. The
// runner that drives a schedule (engine.RunSchedule) records each fault
// on the history; the nemesis never judges what happened (package checker
// does).
package nemesis

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// Topology is what the nemesis can aim at, known before any server starts,
// so that a schedule is pure data that a later run can replay.
type Topology struct {
	// Clients is the number of client worker processes, one per slot
	// ("client-0", ...). A killed client's slot gets a new process.
	Clients int
	// InProcess marks a lock whose clients share one process: no client
	// can be faulted on its own.
	InProcess bool
	// Servers are the lock's own servers, never the protected resource
	// (the judge is not faulted).
	Servers []Server
	// NoHosts says why the lab cannot put servers and clients on hosts of
	// their own here (empty when it can); network faults need hosts.
	NoHosts string
	// NoClockShift says why no server's clock can be moved here (empty
	// when it can; see cluster.ClockShiftAvailable).
	NoClockShift string
	// Name is the named topology (topology.Named) the servers form.
	Name string
	// Ensemble: the lock servers are one system (a quorum) whose members
	// have roles, so a fault can aim at a role (LeaderTarget,
	// FollowerTarget), resolved when it strikes.
	Ensemble bool
	// Replica: the single Redis server has a replica to fail over to. Only
	// a schedule that asks for a fail-over starts one (see Validate), so
	// the generator, which draws from a plain topology, never does.
	Replica bool
}

// Server is one lock server the run will start.
type Server struct {
	Name string
	Kind cluster.Kind
	// ClockShift: started with a movable wall clock (faults/clockjump).
	ClockShift bool
}

// ExploreTopology is the topology explore draws from for the kinds asked
// for: TopologyFor, with a replica when they name fail-over (or its
// proxied form, replica-promote). A replica is
// one more server in every run, so only a user who asks for a fail-over by
// name gets one; the default mix of every kind that applies never fails
// over.
func ExploreTopology(spec impls.Spec, named string, clients int, asked []string) (Topology, error) {
	t, err := TopologyFor(spec, named, clients)
	t.Replica = slices.ContainsFunc(asked, promotes)
	return t, err
}

// TopologyFor names the lock servers spec's backend declares on the named
// topology (the names cluster.Start gives them and the runner finds them
// by) and the client slots.
func TopologyFor(spec impls.Spec, named string, clients int) (Topology, error) {
	t := Topology{Clients: clients, InProcess: spec.Backend.InProcess, Name: topology.Or(named)}
	nt, err := topology.Lookup(named)
	if err != nil {
		return t, err
	}
	decl, err := spec.Backend.On(nt)
	if err != nil {
		return t, err
	}
	if err := hosts.Available(); err != nil {
		t.NoHosts = err.Error()
	}
	if err := cluster.ClockShiftAvailable(); err != nil {
		t.NoClockShift = err.Error()
	}
	for _, n := range decl.Nodes() {
		if n.Role != topology.Lock {
			continue
		}
		t.Ensemble = t.Ensemble || n.Ensemble
		// Only a kind whose servers run under the clock shim has a clock
		// a jump can move (cluster.ServerKind.ClockShift says why not).
		k, err := cluster.KindOf(n.Kind)
		if err != nil {
			return t, err
		}
		t.Servers = append(t.Servers, Server{Name: n.Name, Kind: n.Kind, ClockShift: k.ClockShift() == nil})
	}
	return t, nil
}

// Process is a client worker process as a fault sees it.
type Process interface {
	Signal(sig syscall.Signal) error // to the process group
	Kill()                           // SIGKILL, returns once reaped
}

// System is the running system a fault acts on.
type System interface {
	// Client returns the process now in a client slot.
	Client(slot int) (Process, error)
	// ReplaceClient starts a new client process (with a new client id) in
	// a slot whose process was killed, and returns the new id.
	ReplaceClient(ctx context.Context, slot int) (int, error)
	// Server returns a lock server by name.
	Server(name string) (*cluster.Node, error)
	// TTL is the run's lease time; clock jumps are sized from it.
	TTL() time.Duration
	// ClientHost and ServerHost return the host a client slot's process or
	// a lock server runs on (network faults only: the run has hosts then).
	ClientHost(slot int) (*hosts.Host, error)
	ServerHost(name string) (*hosts.Host, error)
	// LockServers names the lock's servers (not the resource).
	LockServers() []string
	// ServerWithRole names the lock server that has role now, asked of
	// the servers themselves (cluster.ServerKind.Role), for a fault aimed
	// at a role (LeaderTarget, FollowerTarget).
	ServerWithRole(ctx context.Context, role string) (string, error)
	// Clients is the number of client slots.
	Clients() int
}

// Kind is one kind of fault.
type Kind interface {
	Name() string
	// Applies returns nil when the fault can reach spec's lock on topo, or
	// the reason it cannot.
	Applies(spec impls.Spec, topo Topology) error
	// Targets lists what the fault can strike in topo, in a fixed order so
	// a seed draws the same one every time.
	Targets(topo Topology) []string
	// Inject starts the fault on target; Heal ends it. Each returns a note
	// for the history (what exactly was done), possibly empty.
	Inject(ctx context.Context, sys System, target string) (string, error)
	Heal(ctx context.Context, sys System, target string) (string, error)
}

// Shaper is a Kind that needs more of a run's servers than the lock
// declares: hosts of their own for a fault that drops packets or moves an
// address between them, the movable clock for a clock jump, the replica a
// fail-over promotes. The engine asks each step's kind once, so a new
// fault says what it needs where it is defined instead of in a list in
// the engine.
type Shaper interface {
	Shape(d topology.Declaration) topology.Declaration
}

// Shape is d as a fault of the named kind needs it (d itself for a kind
// that needs nothing more, or one not registered: Validate names that).
func Shape(kind string, d topology.Declaration) topology.Declaration {
	if s, ok := kinds[kind].(Shaper); ok {
		return s.Shape(d)
	}
	return d
}

// NeedsHosts reports whether a fault of the named kind needs the run's
// servers and clients on hosts of their own.
func NeedsHosts(kind string) bool { return Shape(kind, topology.Declaration{}).Hosts }

// onOwnHosts is embedded by the kinds that need hosts of their own and
// nothing else: namespaces cost time to make, so only a schedule with such
// a fault gets them.
type onOwnHosts struct{}

func (onOwnHosts) Shape(d topology.Declaration) topology.Declaration {
	d.Hosts = true
	return d
}

// Settler is a Kind that readies the servers before a run's faults, so
// that a fault strikes what it means to strike and not what the lab's
// fresh start left half done: the engine calls Settle once per step of
// such a kind (the step's target as the schedule names it), after the
// workers have built their clients and before any of them is granted the
// lock, and records its note in the history (lin.Settled). A promotion
// settles by waiting for the replica to replay what the primary had then
// (the lock's table, made by each client as it is built): a fail-over then
// loses the grants, as in production, and not the schema.
type Settler interface {
	Settle(ctx context.Context, sys System, target string) (string, error)
}

// Reconnecting is a Kind after which live clients take a while to reach
// the servers again (an address that moved). A holder held up by it waits
// that long for another client before it goes on, unless its lock has a
// lease to stay within (the engine's holdUp).
type Reconnecting interface {
	// Reconnect bounds, with room to spare, the time from the fault's end
	// until a live client reaches the servers again.
	Reconnect() time.Duration
}

var kinds = map[string]Kind{}

func register(k Kind) {
	if _, dup := kinds[k.Name()]; dup {
		panic("nemesis: duplicate kind " + k.Name())
	}
	kinds[k.Name()] = k
}

// Lookup finds a fault kind; the error lists the valid names.
func Lookup(name string) (Kind, error) {
	k, ok := kinds[name]
	if !ok {
		return nil, fmt.Errorf("unknown fault kind %q; valid kinds: %s", name, strings.Join(Names(), ", "))
	}
	return k, nil
}

// Names returns every fault kind's name, sorted.
func Names() []string {
	var names []string
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Applicable splits the named kinds (every kind when names is empty) into
// those that apply to spec on topo and, for the others, the reason they do
// not. An unknown name is an error.
func Applicable(spec impls.Spec, topo Topology, names []string) ([]Kind, map[string]string, error) {
	mix := len(names) == 0
	if mix {
		names = Names()
	}
	var ok []Kind
	skipped := map[string]string{}
	for _, n := range names {
		k, err := Lookup(n)
		if err != nil {
			return nil, nil, err
		}
		if err := k.Applies(spec, topo); err != nil {
			skipped[n] = err.Error()
			continue
		}
		if _, ok := k.(atFailpoint); ok {
			skipped[n] = "it strikes only a client stopped at a failpoint (a fixed schedule), never at a random moment"
			continue
		}
		if len(k.Targets(topo)) == 0 {
			skipped[n] = "nothing in this topology to strike"
			continue
		}
		ok = append(ok, k)
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].Name() < ok[j].Name() })
	return ok, skipped, nil
}
