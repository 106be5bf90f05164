package cluster

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// TestZooKeeperEnsemble starts the zk-ensemble topology's servers, as
// local processes and as containers, and asks each its role: one leader
// and two followers make a quorum, where three standalone servers (a
// member that missed its ensemble lines) would each grant locks of their
// own.
func TestZooKeeperEnsemble(t *testing.T) {
	for _, mode := range []string{ServersLocal, ServersContainers} {
		t.Run(mode, func(t *testing.T) {
			if mode == ServersContainers {
				containerMode(t)
			}
			testZooKeeperEnsemble(t)
		})
	}
}

func testZooKeeperEnsemble(t *testing.T) {
	named, err := topology.Lookup("zk-ensemble")
	if err != nil {
		t.Fatal(err)
	}
	decl, err := named.Declare(topology.Need{Kind: topology.ZooKeeper})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := Start(ctx, decl, External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	var roles []string
	for _, n := range topo.Lock(topology.ZooKeeper) {
		r, err := topo.Role(ctx, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		roles = append(roles, r)
	}
	slices.Sort(roles)
	if want := []string{"follower", "follower", "leader"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	if got := len(topo.Endpoints().Addrs(topology.ZooKeeper)); got != 3 {
		t.Fatalf("clients are given %d addresses, want every member's 3", got)
	}
	// The benchmark's limit on the ensemble is a write through the leader;
	// a second connection finds the limit's znode made by the first.
	kind, err := KindOf(topology.ZooKeeper)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		send, closeFn, err := kind.OpenCheapest(ctx, topo.Endpoints()[topology.ZooKeeper])
		if err != nil {
			t.Fatal(err)
		}
		if err := send(ctx); err != nil {
			t.Errorf("the limit's write: %v", err)
		}
		closeFn()
	}
}

// TestRedisSentinel starts the Sentinel topology and checks what its
// faults rely on: one master, two replicas of it, three sentinels that
// agree it is the master and know each other, and clients given the
// sentinels (via sentinel, the group's name), on loopback and on hosts of
// their own (the network faults' shape).
func TestRedisSentinel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hosts bool
	}{
		{"loopback", false},
		{"hosts", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hosts {
				if err := hosts.Available(); err != nil {
					t.Skip(err)
				}
			}
			named, err := topology.Lookup(topology.RedisSentinelName)
			if err != nil {
				t.Fatal(err)
			}
			decl, err := named.Declare(topology.Need{Kind: topology.Redis})
			if err != nil {
				t.Fatal(err)
			}
			decl.Hosts = tc.hosts
			skipUnlessStartsHere(t, decl)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topo, err := Start(ctx, decl, External{})
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			roles := map[string]string{}
			for _, n := range topo.Nodes() {
				if n == topo.Resource {
					continue
				}
				if roles[n.Name], err = topo.Role(ctx, n.Name); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string]string{"redis-1": "master", "redis-replica-1": "replica", "redis-replica-2": "replica",
				"sentinel-1": "sentinel", "sentinel-2": "sentinel", "sentinel-3": "sentinel"}
			if !maps.Equal(roles, want) {
				t.Fatalf("roles %v, want %v", roles, want)
			}
			master, err := sentinelsAgree(ctx, topo.Lock(topology.Sentinel))
			if err != nil {
				t.Fatal(err)
			}
			if m := topo.Node("redis-1"); master != m.Addr {
				t.Fatalf("sentinels name %s the master, want redis-1 at %s", master, m.Addr)
			}
			ep := topo.Endpoints()[topology.Redis]
			if ep.Via != "sentinel" || ep.Master != SentinelMaster || len(ep.Addrs) != 3 {
				t.Fatalf("lock clients are given %+v, want the three sentinels via sentinel for %s", ep, SentinelMaster)
			}
		})
	}
}
