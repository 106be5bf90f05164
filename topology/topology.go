// Package topology declares the servers of a run as data: which nodes, of
// which kind, in which role, how many, with which settings. It starts
// nothing (package cluster does) and knows no lock: a lock's backend, a
// scenario's needs and a fault schedule's needs are each a declaration, and
// a run's topology is their merge. Every node's name comes from here, so the
// servers cluster starts and the targets the nemesis aims at agree.
//
// Today's servers are three shapes of declaration: a single server
// (Single), independent Redis nodes (RedisNodes, Redlock's five), and a
// replica of a node (ReplicaOf). A ZooKeeper or etcd ensemble, a Sentinel
// group or a database replica set is one more Group with a role and a count.
package topology

import (
	"fmt"
	"slices"
	"time"
)

// Kind names a server program.
type Kind string

const (
	Redis     Kind = "redis"
	ZooKeeper Kind = "zookeeper"
	Postgres  Kind = "postgres"
	Etcd      Kind = "etcd"
	// MySQL is served by Debian's MariaDB server: the source documents'
	// database locks are MySQL's, and MariaDB speaks its protocol and SQL.
	MySQL Kind = "mysql"
	// Sentinel is Redis Sentinel: it serves no lock itself, but watches a
	// Redis master and its replicas, promotes a replica when the master
	// is down, and tells clients which server is the master now.
	Sentinel Kind = "sentinel"
	// RedisCluster is a member of a Redis Cluster: redis-server with
	// cluster mode on, serving the slots it masters. Its group is how
	// clients reach Redis (via cluster), so the Redis locks run on it.
	RedisCluster Kind = "redis-cluster"
)

// titles are the kinds' names as prose writes them.
var titles = map[Kind]string{Redis: "Redis", ZooKeeper: "ZooKeeper", Postgres: "PostgreSQL", Etcd: "etcd", MySQL: "MySQL", Sentinel: "Redis Sentinel", RedisCluster: "Redis Cluster"}

// Title is the kind's name as prose writes it ("PostgreSQL").
func (k Kind) Title() string {
	if t, ok := titles[k]; ok {
		return t
	}
	return string(k)
}

// Role is what a node is for in a run.
type Role string

const (
	// Lock nodes are the ones the lock's clients talk to.
	Lock Role = "lock"
	// A Replica follows another node (ReplicaOf) and can be promoted.
	Replica Role = "replica"
	// The Resource holds the protected counter; it is never a lock node
	// and never faulted (the judge is not part of the system under test).
	Resource Role = "resource"
)

// Group declares nodes of one kind and role.
type Group struct {
	// Name is the node's name; with Count, the prefix of Name-1..Name-Count.
	Name string
	Kind Kind
	Role Role
	// Count, when positive, makes Count numbered nodes; zero makes one
	// node called Name.
	Count int
	// ReplicaOf names the node a replica follows, or the master a group of
	// sentinels monitors (they must know its address before they start).
	ReplicaOf string
	// ClockShift starts Redis nodes with a movable wall clock
	// (faults/clockjump); only Redis runs under the shim, as the JVM and
	// PostgreSQL read the clock in ways it does not cover.
	ClockShift bool
	// TickTime overrides ZooKeeper's tickTime (zero: the lab's default).
	TickTime time.Duration
	// Ensemble makes the group's members one system (a quorum): each is
	// started knowing every member's address, where independent nodes
	// (Redlock's) know none.
	Ensemble bool
	// Settings are server settings the topology declares, by the server's
	// own name for each (PostgreSQL's idle_in_transaction_session_timeout,
	// MariaDB's wait_timeout), as an operator's configuration file would
	// set them: a scenario never sets a server setting itself.
	Settings map[string]string
}

// Node is one declared node, its group expanded.
type Node struct {
	Name string
	Kind Kind
	Role Role
	// Group and Index place it: the group's name and its number in the
	// group (1-based; 0 for a group of one unnumbered node).
	Group      string
	Index      int
	ReplicaOf  string
	ClockShift bool
	TickTime   time.Duration
	// Ensemble: the node is a member of its group's system (Group.Ensemble).
	Ensemble bool
	// Settings are the group's declared server settings (Group.Settings).
	Settings map[string]string
}

// Declaration is the servers of one run.
type Declaration struct {
	Groups []Group
	// Hosts puts every node, and every client, on a host of its own (a
	// network namespace the lab creates), so network faults can drop
	// packets between them.
	Hosts bool
}

// Single declares one server of kind as the lock's. A single Redis is
// redis-1, as the first of any number of Redis nodes is, so a schedule
// names it the same either way.
func Single(kind Kind) Group {
	if kind == Redis {
		return RedisNodes(1)
	}
	return Group{Name: string(kind), Kind: kind, Role: Lock}
}

// RedisNodes declares n independent Redis lock nodes, redis-1..redis-n.
func RedisNodes(n int) Group {
	return Group{Name: string(Redis), Kind: Redis, Role: Lock, Count: n}
}

// ReplicaName is the name of the replica Replica declares.
const ReplicaName = "redis-replica"

// ReplicaOf declares a Redis replica of node master, to fail over to.
func ReplicaOf(master string) Group {
	return Group{Name: ReplicaName, Kind: Redis, Role: Replica, ReplicaOf: master}
}

// ResourceName is the protected counter's node.
const ResourceName = "resource"

// ResourceNode declares the Redis node holding the protected counter.
func ResourceNode() Group {
	return Group{Name: ResourceName, Kind: Redis, Role: Resource}
}

// Of declares groups, with no hosts.
func Of(groups ...Group) Declaration { return Declaration{Groups: groups} }

// Nodes expands the groups into nodes, in declaration order.
func (d Declaration) Nodes() []Node {
	var out []Node
	for _, g := range d.Groups {
		n := Node{Name: g.Name, Kind: g.Kind, Role: g.Role, Group: g.Name,
			ReplicaOf: g.ReplicaOf, ClockShift: g.ClockShift, TickTime: g.TickTime, Ensemble: g.Ensemble, Settings: g.Settings}
		if g.Count == 0 {
			out = append(out, n)
			continue
		}
		for i := 1; i <= g.Count; i++ {
			n.Name, n.Index = fmt.Sprintf("%s-%d", g.Name, i), i
			out = append(out, n)
		}
	}
	return out
}

// Names lists the nodes of role (every node when role is empty).
func (d Declaration) Names(role Role) []string {
	var out []string
	for _, n := range d.Nodes() {
		if role == "" || n.Role == role {
			out = append(out, n.Name)
		}
	}
	return out
}

// Members returns the nodes of the group called name, in order.
func (d Declaration) Members(group string) []Node {
	var out []Node
	for _, n := range d.Nodes() {
		if n.Group == group {
			out = append(out, n)
		}
	}
	return out
}

// Group returns the group called name, if declared.
func (d Declaration) Group(name string) (Group, bool) {
	i := slices.IndexFunc(d.Groups, func(g Group) bool { return g.Name == name })
	if i < 0 {
		return Group{}, false
	}
	return d.Groups[i], true
}

// Merge returns a declaration with the groups of both: a group o declares
// under a name d already has is merged into it (the larger count, either's
// clock shift, o's tick time or replica master when set), so that a
// scenario or a schedule can add servers or settings to a lock's own.
func (d Declaration) Merge(o Declaration) Declaration {
	out := Declaration{Groups: slices.Clone(d.Groups), Hosts: d.Hosts || o.Hosts}
	for _, g := range o.Groups {
		i := slices.IndexFunc(out.Groups, func(h Group) bool { return h.Name == g.Name })
		if i < 0 {
			out.Groups = append(out.Groups, g)
			continue
		}
		h := &out.Groups[i]
		h.Count = max(h.Count, g.Count)
		h.ClockShift = h.ClockShift || g.ClockShift
		h.Ensemble = h.Ensemble || g.Ensemble
		if g.TickTime != 0 {
			h.TickTime = g.TickTime
		}
		if g.ReplicaOf != "" {
			h.ReplicaOf = g.ReplicaOf
		}
		if len(g.Settings) > 0 {
			h.Settings = g.Settings
		}
	}
	return out
}

// WithClockShift returns d with every Redis lock node started under the
// movable clock a clock jump needs.
func (d Declaration) WithClockShift() Declaration {
	d.Groups = slices.Clone(d.Groups)
	for i, g := range d.Groups {
		if g.Kind == Redis && g.Role == Lock {
			d.Groups[i].ClockShift = true
		}
	}
	return d
}

// Validate checks the declaration makes sense before anything starts:
// names are unique, a replica's master is declared before it.
func (d Declaration) Validate() error {
	seen := map[string]Node{}
	for _, n := range d.Nodes() {
		if _, dup := seen[n.Name]; dup {
			return fmt.Errorf("topology: two nodes named %s", n.Name)
		}
		if n.Role == Replica {
			m, ok := seen[n.ReplicaOf]
			if !ok {
				return fmt.Errorf("topology: replica %s follows %q, which is not declared before it", n.Name, n.ReplicaOf)
			}
			if m.Kind != n.Kind {
				return fmt.Errorf("topology: replica %s (%s) cannot follow %s (%s)", n.Name, n.Kind, m.Name, m.Kind)
			}
		}
		seen[n.Name] = n
	}
	return nil
}
