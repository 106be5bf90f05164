package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// ServerKind is the one home of a server program: everything the lab asks
// of a kind of server, so that no other package switches on the kind.
// Adding a server kind is its file here that registers one of these, a
// named topology that declares it (topology/), its image under docker/ and
// its line in scripts/setup.sh; TestNewServerKindProvides checks each, and
// TestKindAnswersEveryQuestion that no question goes unanswered.
type ServerKind interface {
	// Kind is the topology's name for the program.
	Kind() topology.Kind
	// Package is the Debian package that installs it, for the one error a
	// missing binary gives.
	Package() string
	// Start starts one group's members. Every member's host and address
	// are fixed before any starts, so the members of an ensemble start
	// knowing each other (Member.Peers); independent nodes ignore them.
	Start(ctx context.Context, members []Member) ([]*Node, error)
	// Endpoint is what a lock client is given for the started lock nodes.
	Endpoint(nodes []*Node) topology.Endpoint
	// Role asks the running server what it is now ("leader", "follower",
	// "master", "replica", "standalone"), for faults aimed at a role.
	Role(ctx context.Context, n *Node) (string, error)
	// Cheapest names the kind's cheapest request and opens one client
	// sending it back to back: the benchmark's round-trip limit.
	Cheapest() string
	OpenCheapest(ctx context.Context, ep topology.Endpoint) (send func(context.Context) error, closeFn func(), err error)
	// CostUnit says what Served counts; Served reads the servers' own
	// cumulative count of requests (settle: read after clients closed).
	CostUnit() string
	Served(ctx context.Context, ep topology.Endpoint, settle bool) (float64, error)
	// ServedAtSessionEnd says Served counts a session's requests only once
	// the session has ended (or reads once every other session has): the
	// clients it counts must be closed before the second reading, so they
	// cannot be kept for later measurements.
	ServedAtSessionEnd() bool
	// Image is the folder under docker/ that builds the kind's container
	// image (container mode).
	Image() string
	// Ensembles says why the kind cannot start as a group of members that
	// know each other here (nil when it can), so a cell on an ensemble
	// says so in advance instead of failing at the start.
	Ensembles() error
	// Describe asks the running servers at ep for their version and the
	// settings that decide what a lock costs there (persistence, fsync),
	// for the benchmark's record of the machine.
	Describe(ctx context.Context, ep topology.Endpoint) (Description, error)
	// OwnServers is how a user points the lab at servers of this kind
	// they already run, or why they cannot.
	OwnServers() OwnServers
	// RoundTripCounter names the servers' own count the benchmark reads a
	// lock's round trips from.
	RoundTripCounter() string
	// ClockShift says why the kind's servers cannot run under the clock
	// shim a clock jump needs (nil when they can).
	ClockShift() error
	// HolderPartition says why cutting a holder off the kind's server, a
	// lock on nodes of them, is not a cell the lab has shown and reviewed
	// (nil when it is): holder-partition runs only where this is nil, so a
	// kind left out says why instead of being missing from a list.
	HolderPartition(nodes int) error
	// SilentClient says why the kind's server, started with a group's
	// declared settings, does not end on its own, within seconds, the
	// session of a client it has stopped hearing from, and so the locks
	// bound to that session (nil when it does: a ZooKeeper session's
	// timeout, an etcd lease's TTL, PostgreSQL's keep-alive with
	// tcp_user_timeout, MariaDB's wait_timeout). A keep-alive alone is not
	// enough: it gives up idle connections only, never one whose last
	// reply is unacknowledged. holder-partition-long cuts a holder off for longer than
	// that; where nothing ends the session, or nothing is bound to one,
	// the cut has nothing to show that holder-partition does not.
	SilentClient(settings map[string]string) error
	// SingleServerFaults says why the faults the lab aims at a lock's one
	// server (its client crashed between the acquire's steps, the server
	// restarted, its replica promoted by script), on a lock over nodes of
	// the kind, are not cells it has shown and reviewed (nil when they are).
	SingleServerFaults(nodes int) error
	// OneServerSession says why a client's session does not live on one
	// server of the kind's group (nil when it does: a ZooKeeper session),
	// so a fault cutting the holder off "its" server has nothing to aim at.
	OneServerSession() error
	// Roles says what the kind's group is to a fault aimed at a role.
	Roles() Roles
}

// Roles is what the members of a kind's group are to a fault aimed at a
// role rather than a name.
type Roles struct {
	// Elected is the role the group's own system moves to another member
	// when one fails: "master" (a Sentinel group's Redis servers, a Redis
	// Cluster's slot masters) or "leader" (a quorum); "" when nothing
	// moves it (a lone server, a replica the lab promotes by script).
	Elected string
	// Directs: the members serve no lock request but tell clients which
	// server does (a sentinel), so cut off, the servers keep granting.
	Directs bool
}

// Serves is the kind of lock endpoint a group of kind k gives clients:
// k's own, or the kind it is a way into (a Sentinel group and a Redis
// Cluster serve Redis locks).
func Serves(k topology.Kind) topology.Kind {
	sk, err := KindOf(k)
	if err != nil {
		return k
	}
	return sk.Endpoint(nil).Kind
}

// Description is what a kind's running servers say about themselves.
type Description struct {
	Version  string
	Settings map[string]string
	// LabSettings are settings the lab starts the kind's servers with that
	// no request to them reports (each set in the kind's file): recorded
	// only for servers the lab started.
	LabSettings map[string]string
}

// CommandTimer is a kind whose servers count the time they spent running
// requests (Redis: INFO commandstats usec): CommandTime is that total so
// far, over the servers a lock's requests land on, connection set-up left
// out. The benchmark splits a lock's server CPU with it.
type CommandTimer interface {
	CommandTime(ctx context.Context, ep topology.Endpoint) (time.Duration, error)
}

// CommandCounter is a kind whose servers count their requests command by
// command (Redis: INFO commandstats, a script's own commands included):
// CommandCounts is each command's calls so far over the servers a lock's
// requests land on, connection set-up left out. The benchmark shows with it
// what a lock's cost per acquisition is made of (a refused attempt, a
// wake-up, a grant's writes).
type CommandCounter interface {
	CommandCounts(ctx context.Context, ep topology.Endpoint) (map[string]float64, error)
}

// FeedCounter is a kind whose round trips are counted from the servers'
// own feed of the requests they run rather than from a cumulative counter
// (Redis: MONITOR, because its counters also count every command a Lua
// script calls, which costs no round trip). StartFeedCount starts watching
// the servers a lock's requests land on at ep; stop ends the count and
// gives each server's count of client requests in between; closeFn frees
// what it holds.
type FeedCounter interface {
	StartFeedCount(ctx context.Context, ep topology.Endpoint) (stop func(context.Context) ([]float64, error), closeFn func(), err error)
}

// WakeUpHopper is a kind with a wake-up hop: a client blocked on the
// server is woken by another's request, the cheapest hand-off between two
// clients through it (Redis: RPUSH → BLPOP), which a lock handing the lock
// to a sleeping waiter cannot beat. WakeUpRequest names it in the report.
type WakeUpHopper interface {
	WakeUpRequest() string
}

// FanOuter is a kind whose lock nodes are independent servers a lock over
// several sends to at once, so a fan-out to them bounds it.
// IndependentNodes is how many there are at ep: a group reached through
// one way in (a Sentinel group, a Redis Cluster) counts as one.
type FanOuter interface {
	IndependentNodes(ep topology.Endpoint) int
}

// ScriptedFailover is a kind whose lone server the lab replaces by script
// with a replica started beside it (the nemesis's fail-over): the server
// is SIGKILLed, PromoteReplica makes the replica a master, and the
// server's address moves to the replica's host.
type ScriptedFailover interface {
	PromoteReplica(ctx context.Context, replica *Node) error
}

// ReplicaStarter is a kind whose replicas cannot start everywhere its
// single servers can: Replicas says why they cannot start here (nil when
// they can). A kind without it starts replicas wherever it starts.
type ReplicaStarter interface {
	Replicas() error
}

// Ensembles says why the declared ensembles or replicas of decl cannot
// start here (nil when they can, or when it declares none), so a cell
// says so in advance instead of failing at the start.
func Ensembles(decl topology.Declaration) error {
	for _, g := range decl.Groups {
		if !g.Ensemble && g.ReplicaOf == "" {
			continue
		}
		k, err := KindOf(g.Kind)
		if err != nil {
			return err
		}
		if g.Ensemble {
			if err := k.Ensembles(); err != nil {
				return err
			}
		}
		if r, ok := k.(ReplicaStarter); ok && g.ReplicaOf != "" {
			if err := r.Replicas(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Member is one node about to start: its declaration, its host (nil on
// loopback), the address it will listen on, and the whole group's.
type Member struct {
	topology.Node
	Host *hosts.Host
	Bind string // the address to bind to
	Port int    // the client port
	// Peers are every member of the group (this one too), addresses fixed.
	Peers []*Member
	// Extra ports a kind needs besides the client port (ZooKeeper's quorum
	// and election ports, etcd's peer port), fixed before any member
	// starts, by name.
	Ports map[string]int
	// ReplicaOf is the started node a replica follows (nil otherwise).
	ReplicaOf *Node
}

// Addr is the member's client address.
func (m *Member) Addr() string { return net.JoinHostPort(m.Bind, strconv.Itoa(m.Port)) }

// PortFor returns the member's extra port called name, reserving a free one
// on its host the first time it is asked for.
func (m *Member) PortFor(name string) (int, error) {
	if p, ok := m.Ports[name]; ok {
		return p, nil
	}
	_, p, err := listen(m.Host)
	if err != nil {
		return 0, err
	}
	if m.Ports == nil {
		m.Ports = map[string]int{}
	}
	m.Ports[name] = p
	return p, nil
}

var (
	kindsMu sync.Mutex
	kinds   = map[topology.Kind]ServerKind{}
)

// RegisterKind adds a server kind; a second one of the same name panics.
func RegisterKind(k ServerKind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[k.Kind()]; dup {
		panic("cluster: duplicate server kind " + string(k.Kind()))
	}
	kinds[k.Kind()] = k
}

// KindOf returns the server kind called name; the error lists the known ones.
func KindOf(name topology.Kind) (ServerKind, error) {
	kindsMu.Lock()
	k, ok := kinds[name]
	kindsMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no server of kind %q; known kinds: %s", name, strings.Join(KindNames(), ", "))
	}
	return k, nil
}

// KindNames lists the registered server kinds by name.
func KindNames() []string {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	var out []string
	for k := range kinds {
		out = append(out, string(k))
	}
	sort.Strings(out)
	return out
}

// addrsOf lists the nodes' client addresses.
func addrsOf(nodes []*Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Addr)
	}
	return out
}

// stopNodes stops nodes a failed group start had already started.
func stopNodes(nodes []*Node) {
	for _, n := range nodes {
		n.Stop()
	}
}

// startEach starts independent members one after another with start (they
// need not know each other), stopping those started if one fails.
func startEach(members []Member, start func(m Member) (*Node, error)) ([]*Node, error) {
	var out []*Node
	for _, m := range members {
		n, err := start(m)
		if err != nil {
			stopNodes(out)
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// startTogether starts every member of an ensemble at once and waits for
// all: a member serves only once a quorum formed, so starting them one
// after another would wait forever on the first. If any fails, those
// started are stopped.
func startTogether(members []Member, start func(i int, m Member) (*Node, error)) ([]*Node, error) {
	nodes := make([]*Node, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = start(i, m)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopNodes(slices.DeleteFunc(nodes, func(n *Node) bool { return n == nil }))
		return nil, err
	}
	return nodes, nil
}

// emptyRestartRefuser is a kind whose ensemble member refuses to start
// again without its data.
type emptyRestartRefuser interface {
	NoEmptyRestart() string
}

// NoEmptyRestart says why a member of an ensemble of kind k cannot be
// restarted without its data, or "" when it can (a ZooKeeper member
// rejoins empty and is sent the leader's state; a lone server starts
// empty). The nemesis asks it before it draws server-restart-empty.
func NoEmptyRestart(k topology.Kind) string {
	sk, err := KindOf(k)
	if err != nil {
		return ""
	}
	if r, ok := sk.(emptyRestartRefuser); ok {
		return r.NoEmptyRestart()
	}
	return ""
}

// dataLess is a kind whose servers keep nothing on disk the lab restarts
// them with.
type dataLess interface {
	KeepsNoData() bool
}

// KeepsNoData reports a kind whose servers, restarted with their data
// dir, come back empty all the same (Redis, started without snapshots),
// so the nemesis's note on a restart says so. A kind without the answer
// keeps its data.
func KeepsNoData(k topology.Kind) bool {
	sk, err := KindOf(k)
	if err != nil {
		return false
	}
	d, ok := sk.(dataLess)
	return ok && d.KeepsNoData()
}
