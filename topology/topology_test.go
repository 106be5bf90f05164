package topology_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/topology"
)

// Today's three shapes: a single server, Redlock's independent nodes, and
// a replica to fail over to; the resource beside any of them.
func ExampleDeclaration_Nodes() {
	d := topology.Of(topology.RedisNodes(5), topology.ResourceNode())
	for _, n := range d.Nodes() {
		fmt.Println(n.Name, n.Kind, n.Role)
	}
	// Output:
	// redis-1 redis lock
	// redis-2 redis lock
	// redis-3 redis lock
	// redis-4 redis lock
	// redis-5 redis lock
	// resource redis resource
}

func TestDeclarations(t *testing.T) {
	tests := []struct {
		name  string
		decl  topology.Declaration
		names string // every node, in order
		locks string // the lock's nodes
		err   string // Validate's complaint, if any
	}{
		{"single Redis", topology.Of(topology.Single(topology.Redis)), "redis-1", "redis-1", ""},
		{"single ZooKeeper", topology.Of(topology.Single(topology.ZooKeeper)), "zookeeper", "zookeeper", ""},
		{"Redlock's five", topology.Of(topology.RedisNodes(5)), "redis-1 redis-2 redis-3 redis-4 redis-5", "redis-1 redis-2 redis-3 redis-4 redis-5", ""},
		{"a replica", topology.Of(topology.RedisNodes(1), topology.ReplicaOf("redis-1"), topology.ResourceNode()),
			"redis-1 redis-replica resource", "redis-1", ""},
		{"a replica of nothing", topology.Of(topology.ReplicaOf("redis-1")), "redis-replica", "", "not declared before it"},
		{"a replica of another kind", topology.Of(topology.Single(topology.Postgres), topology.ReplicaOf("postgres")), "postgres redis-replica", "postgres", "cannot follow"},
		{"two nodes of one name", topology.Of(topology.RedisNodes(1), topology.Group{Name: "redis-1", Kind: topology.Redis, Role: topology.Lock}), "redis-1 redis-1", "redis-1 redis-1", "two nodes named"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(tc.decl.Names(""), " "); got != tc.names {
				t.Errorf("names %q, want %q", got, tc.names)
			}
			if got := strings.Join(tc.decl.Names(topology.Lock), " "); got != tc.locks {
				t.Errorf("lock nodes %q, want %q", got, tc.locks)
			}
			err := tc.decl.Validate()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Validate: %v, want %q", err, tc.err)
			}
		})
	}
}

// A scenario's or a schedule's declaration merges into the lock's own:
// same-named groups merge their settings, new groups are added.
func TestMerge(t *testing.T) {
	lock := topology.Of(topology.RedisNodes(5))
	d := lock.WithClockShift().Merge(topology.Declaration{Hosts: true}).Merge(topology.Of(topology.ResourceNode()))
	if !d.Hosts || len(d.Groups) != 2 {
		t.Fatalf("merged %+v", d)
	}
	for _, n := range d.Nodes() {
		if want := n.Role == topology.Lock; n.ClockShift != want {
			t.Errorf("%s: clock shift %v, want %v", n.Name, n.ClockShift, want)
		}
	}
	if lock.Groups[0].ClockShift {
		t.Error("WithClockShift changed the declaration it was called on")
	}
	if got := d.Merge(topology.Of(topology.RedisNodes(3))).Names(topology.Lock); !slices.Equal(got, d.Names(topology.Lock)) {
		t.Errorf("merging fewer nodes of a group shrank it: %v", got)
	}
}
