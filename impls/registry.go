package impls

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/locklab/locklab/topology"
)

// Backend says which servers an implementation needs: their kind and, for
// a lock spread over independent servers (Redlock), how many. It names no
// shape: every named topology that carries the kind can carry the lock
// (topology.Named.Carries).
type Backend struct {
	Kind topology.Kind // "" for a lock with no server
	// Nodes is the number of independent servers of Kind (0 means 1).
	Nodes int
	// InProcess marks locks whose clients must all live in one process
	// (local-mutex shares one mutex between them): no worker processes, so
	// no client faults.
	InProcess bool
	// Replicas: the lock waits for replicas of its server to acknowledge
	// (redis-setnx-px-wait's WAIT), so only a topology with replicas
	// carries it.
	Replicas bool
	// AllReplicas, with Replicas: the lock waits for every replica its
	// master counts, not for one (Redisson's claim: a lock propagated to
	// all replicas survives a fail-over), so it grants nothing while a
	// counted replica lags behind its WAIT's timeout.
	AllReplicas bool
	// Direct: the client takes plain server addresses only (a guest), so a
	// topology reached through Sentinel cannot carry it (topology.Need).
	Direct bool
}

// Need is what the backend asks of a topology.
func (b Backend) Need() topology.Need {
	return topology.Need{Kind: b.Kind, Nodes: b.Nodes, Replicas: b.Replicas, Direct: b.Direct}
}

// On declares the lock servers the backend needs on topology t.
func (b Backend) On(t topology.Named) (topology.Declaration, error) {
	if !t.Carries(b.Need()) {
		return topology.Declaration{}, fmt.Errorf("the %s topology cannot carry a lock of %s", t.Name, b)
	}
	return t.Declare(b.Need())
}

// Topology declares the lock servers on the single topology (today's
// servers: each one independent).
func (b Backend) Topology() topology.Declaration {
	t, _ := topology.Lookup(topology.SingleName)
	d, _ := t.Declare(b.Need())
	return d
}

// String names the servers the backend needs ("5 redis servers").
func (b Backend) String() string {
	switch {
	case b.InProcess || b.Kind == "":
		return "no server (in-process)"
	case b.Nodes > 1:
		return fmt.Sprintf("%d independent %s servers", b.Nodes, b.Kind)
	}
	return "one " + string(b.Kind) + " system"
}

// Spec describes one registered implementation.
type Spec struct {
	Name    string
	Summary string // one line for `bench list`
	// Broken names the flaw of a deliberately broken variant ("" if none).
	Broken string
	Peer   bool // an adapter around a third-party library
	// Guest: a lock of another language run behind the worker protocol
	// (impls/guest, docs/guests); also a Peer.
	Guest   bool
	Caps    Capabilities
	Backend Backend
	// Source is the file a reader should open, relative to the repo root.
	Source string
	// Failpoints lists the named failpoints inside the implementation
	// (faults/failpoint), where scenarios can crash or pause a client.
	Failpoints []string
	// RoundTrips per uncontended acquire-release pair: every server-backed
	// lock declares them (the benchmark reads them beside its count).
	RoundTrips RoundTrips
	// Footprint is what the lock keeps on its server while held, which the
	// conformance suite reads back.
	Footprint Footprint
	// Page is the lesson page a reader of the lock is sent to, relative to
	// the repo root (docs/lessons/...): the page about it, else the one
	// that shows it most. A guest's page is docs/guests/README.md's row,
	// and it leaves Page empty.
	Page string
	New  func(cfg Config) (Locker, error)
}

var (
	regMu sync.Mutex
	reg   = map[string]Spec{}
)

// Register adds an implementation; it panics on a duplicate name, which is
// a programming error caught by any test run.
func Register(s Spec) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := reg[s.Name]; dup {
		panic("impls: duplicate implementation " + s.Name)
	}
	if s.New == nil {
		panic("impls: " + s.Name + " has no factory")
	}
	reg[s.Name] = s
}

// Lookup finds an implementation by name; the error lists the valid names.
func Lookup(name string) (Spec, error) {
	regMu.Lock()
	s, ok := reg[name]
	regMu.Unlock()
	if !ok {
		return Spec{}, fmt.Errorf("unknown implementation %q; valid names: %s", name, strings.Join(Names(), ", "))
	}
	return s, nil
}

// All returns every registered implementation: ours first, then peers, by name.
func All() []Spec {
	regMu.Lock()
	out := make([]Spec, 0, len(reg))
	for _, s := range reg {
		out = append(out, s)
	}
	regMu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Peer != out[j].Peer {
			return !out[i].Peer
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Names returns every registered name in All's order.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return names
}

// String renders capabilities as a compact list for `bench list`.
func (c Capabilities) String() string {
	var out []string
	add := func(ok bool, s string) {
		if ok {
			out = append(out, s)
		}
	}
	add(c.Fencing, "fencing")
	add(c.Reentrant, "reentrant")
	add(c.Renewal, "renewal")
	add(c.LostNotify, "lost-notify")
	add(c.NoPolling, "no-polling")
	add(c.Expiry, "expiry")
	add(c.Validity, "validity")
	add(c.Queued, "queued")
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}
