package topology

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Need is what a lock asks of its servers: their kind and, for a lock that
// spreads itself over independent servers (Redlock), how many. Every named
// topology that carries the kind can carry the lock unchanged.
type Need struct {
	Kind Kind
	// Nodes is the number of independent servers of Kind the lock talks to
	// (0 means 1). A topology whose servers form one system (a quorum, a
	// Sentinel group) carries only locks that need one.
	Nodes int
	// Replicas: the lock waits for replicas of its server to acknowledge
	// its writes, so only a topology whose server has replicas carries it.
	Replicas bool
	// Direct: the lock's client takes the servers' own addresses and
	// nothing else (a guest speaking protocol 1), so a topology whose
	// clients find the server through a discovery service (Sentinel)
	// cannot carry it.
	Direct bool
}

// Count is Nodes with its zero value read as one server.
func (n Need) Count() int { return max(n.Nodes, 1) }

// Named is a topology a run can be given by name (`-topology NAME`): which
// servers carry a lock of a kind, as what shape of system. The name is part
// of a matrix cell's key, so a verdict always says where it was measured.
type Named struct {
	Name    string
	Summary string
	// Kinds are the lock server kinds the topology carries; empty means
	// every kind (the single-server topology).
	Kinds []Kind
	// Declare returns the lock's servers on this topology for need; the
	// engine adds the protected resource. An error says why the topology
	// cannot carry the lock.
	Declare func(need Need) (Declaration, error)
	// SameRequestsAs names the topology a request takes the same path on:
	// this one differs only in settings that change what a fault does (a
	// timeout, a write refused without replicas) or in work done after the
	// answer (a replica fed asynchronously), not in what a request waits
	// for. The default benchmark measures that one instead; -topology
	// still measures this one.
	SameRequestsAs string
	// Alone says why a cell on this topology runs with no other cell
	// beside it in a matrix, or is empty: the cells of a topology whose
	// start or elections take both cores of a small machine for seconds
	// (three JVMs; a leader elected on a timeout) would delay another
	// cell's fault as much as be delayed by it, and a server that ends an
	// idle session would end a live holder's whose keep-alive another
	// cell's load made late. A topology of light server
	// processes shares the machine as the single one does, each cell on
	// servers and hosts of its own.
	Alone string
	// CommitWaits says why a commit on this topology's primary waits for
	// its one replica's acknowledgement (synchronous or semi-synchronous
	// replication), or is empty. A fault that holds the replication stream
	// back cannot leave that replica behind there: it stalls every commit
	// instead, and the lock grants nothing.
	CommitWaits string
}

// Carries reports whether the topology can carry a lock of need's kind.
func (t Named) Carries(need Need) bool {
	if need.Kind == "" {
		// A lock of no server (in-process) runs on the single topology only:
		// there is nothing of it to place elsewhere.
		return len(t.Kinds) == 0
	}
	if len(t.Kinds) > 0 && !slices.Contains(t.Kinds, need.Kind) {
		return false
	}
	_, err := t.Declare(need)
	return err == nil
}

// SingleName names the topology of today's cells: each of the lock's
// servers is one independent server (Redlock's five are five of them).
// Every result row without a topology means this one.
const SingleName = "single"

// ZKEnsembleName is the three-server ZooKeeper ensemble.
const ZKEnsembleName = "zk-ensemble"

// Or returns name, or SingleName when name is empty (a row written before
// the topology was an axis).
func Or(name string) string {
	if name == "" {
		return SingleName
	}
	return name
}

var (
	namedMu sync.Mutex
	named   = map[string]Named{}
)

// Register adds a named topology; a duplicate name panics (a programming
// error any test run finds).
func Register(t Named) {
	namedMu.Lock()
	defer namedMu.Unlock()
	if _, dup := named[t.Name]; dup {
		panic("topology: duplicate topology " + t.Name)
	}
	if t.Declare == nil {
		panic("topology: " + t.Name + " declares nothing")
	}
	named[t.Name] = t
}

// Lookup finds a named topology; the error lists the valid names.
func Lookup(name string) (Named, error) {
	namedMu.Lock()
	t, ok := named[Or(name)]
	namedMu.Unlock()
	if !ok {
		return Named{}, fmt.Errorf("unknown topology %q; valid names: %s", name, strings.Join(NamedNames(), ", "))
	}
	return t, nil
}

// All returns every named topology, the single one first, then by name.
func All() []Named {
	namedMu.Lock()
	out := make([]Named, 0, len(named))
	for _, t := range named {
		out = append(out, t)
	}
	namedMu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == SingleName) != (out[j].Name == SingleName) {
			return out[i].Name == SingleName
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// NamedNames lists every named topology in All's order.
func NamedNames() []string {
	var out []string
	for _, t := range All() {
		out = append(out, t.Name)
	}
	return out
}

func init() {
	Register(Named{
		Name:    SingleName,
		Summary: "each lock server is one independent server on loopback (Redlock's five are five of them)",
		Declare: func(need Need) (Declaration, error) {
			if need.Kind == "" {
				return Declaration{}, nil
			}
			if need.Replicas {
				return Declaration{}, fmt.Errorf("the single topology's %s has no replica for the lock to wait for", need.Kind)
			}
			if need.Kind == Redis {
				return Of(RedisNodes(need.Count())), nil
			}
			if need.Count() > 1 {
				return Declaration{}, fmt.Errorf("the single topology has one %s server, and the lock asks for %d", need.Kind, need.Count())
			}
			return Of(Single(need.Kind)), nil
		},
	})
	Register(Named{
		Name:    ZKEnsembleName,
		Summary: "a ZooKeeper ensemble of three servers (each on a host of its own under network faults); clients may connect to any member",
		Alone:   "three JVMs start and elect a leader, which takes both cores for seconds",
		Kinds:   []Kind{ZooKeeper},
		Declare: func(need Need) (Declaration, error) {
			return Ensemble(need, ZooKeeper, 3)
		},
	})
	Register(Named{
		Name: RedisSentinelName,
		Summary: "a Redis master, two replicas of it and three Redis Sentinels watching it (each on a host of its own under network faults); " +
			"clients ask the sentinels for the master, and the sentinels promote a replica when it is down",
		Kinds:   []Kind{Redis},
		Declare: RedisSentinel,
	})
}

// RedisSentinelName is the Sentinel topology's name.
const RedisSentinelName = "redis-sentinel"

// SentinelGroup is the name of the sentinels' group (sentinel-1..3).
const SentinelGroup = "sentinel"

// RedisSentinel declares a Redis master (redis-1, named as a single
// Redis is, so a schedule aimed at the first server means the same),
// two replicas of it (redis-replica-1, -2) and three sentinels that
// monitor it. The sentinels are a lock group: their endpoint is how
// clients reach the Redis (via sentinel), so a lock needing one Redis
// server runs on it unchanged. A lock over several independent Redis
// servers (Redlock) cannot: the group is one system.
func RedisSentinel(need Need) (Declaration, error) {
	if need.Kind != Redis {
		return Declaration{}, fmt.Errorf("a Sentinel group carries Redis locks, not %s ones", need.Kind)
	}
	if need.Count() != 1 {
		return Declaration{}, fmt.Errorf("a Sentinel group is one system, and the lock asks for %d independent servers", need.Count())
	}
	if need.Direct {
		return Declaration{}, errors.New("a Sentinel group's clients find the master through the sentinels, and the lock's client takes plain server addresses only")
	}
	master := RedisNodes(1)
	master.Settings = maps.Clone(ReplicatedRedisSettings)
	return Declaration{Groups: []Group{
		master,
		{Name: ReplicaName, Kind: Redis, Role: Replica, Count: 2, ReplicaOf: master.Name + "-1", Settings: maps.Clone(ReplicatedRedisSettings)},
		{Name: SentinelGroup, Kind: Sentinel, Role: Lock, Count: 3, ReplicaOf: master.Name + "-1", Ensemble: true},
	}}, nil
}

// ReplicatedRedisSettings are the settings of every Redis that has or may
// become a master with replicas: a Sentinel group's (a promoted replica is
// the next master) and a Redis Cluster's. Redis 7 holds a diskless full
// sync back 5 s for more replicas to join it (repl-diskless-sync-delay),
// so a Sentinel group's replicas had not synced for the first seconds of a
// run, and a master lost then took every grant with it; and every Redis
// Cluster run spent those 5 s forming, since the lab waits for its
// replicas to sync before any fault. The lab's replicas start at once.
var ReplicatedRedisSettings = map[string]string{"repl-diskless-sync-delay": "0"}

// Ensemble declares n members of one system of kind, for a lock that talks
// to one such system. Like every declaration, it puts each member on a host
// of its own when the run's faults need hosts (engine.ScheduleTopology):
// the lab's own in-process clients (the contention run, the benchmark)
// reach loopback only.
func Ensemble(need Need, kind Kind, n int) (Declaration, error) {
	if need.Kind != kind {
		return Declaration{}, fmt.Errorf("a %s ensemble carries %s locks, not %s ones", kind, kind, need.Kind)
	}
	if need.Count() != 1 {
		return Declaration{}, fmt.Errorf("an ensemble is one system, and the lock asks for %d independent servers", need.Count())
	}
	return Declaration{Groups: []Group{{Name: string(kind), Kind: kind, Role: Lock, Count: n, Ensemble: true}}}, nil
}
