package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/topology"
)

// TestRedisCluster starts the Redis Cluster topology and checks what its
// faults rely on: three masters and a replica of each, clients given every
// member via cluster, a key's slot master found by asking the members,
// and, once that master is SIGKILLed, its own replica promoted by the
// cluster (not by the lab) and named the key's master by the survivors;
// on loopback and on hosts of their own (the network faults' shape).
func TestRedisCluster(t *testing.T) {
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
			named, err := topology.Lookup(topology.RedisClusterName)
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
			for _, n := range topo.Lock(topology.RedisCluster) {
				if roles[n.Name], err = topo.Role(ctx, n.Name); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string]string{"redis-1": "master", "redis-2": "master", "redis-3": "master",
				"redis-4": "replica", "redis-5": "replica", "redis-6": "replica"}
			if !maps.Equal(roles, want) {
				t.Fatalf("roles %v, want %v", roles, want)
			}
			ep := topo.Endpoints()[topology.Redis]
			if ep.Via != "cluster" || len(ep.Addrs) != 6 {
				t.Fatalf("lock clients are given %+v, want the six members via cluster", ep)
			}
			const key = "locklab-slot-test"
			if !tc.hosts {
				// The counters are the benchmark's, which runs on loopback.
				countersOfMasters(ctx, t, ep, key)
			}
			master, ok, err := topo.MasterOf(ctx, key)
			if err != nil || !ok {
				t.Fatalf("master of %q: %q, %v, %v", key, master, ok, err)
			}
			var index int
			if _, err := fmt.Sscanf(master, "redis-%d", &index); err != nil || index > 3 {
				t.Fatalf("%q's slot is mastered by %q, want one of redis-1..3", key, master)
			}
			replica := fmt.Sprintf("redis-%d", index+3)
			killed := time.Now()
			if err := topo.Node(master).Kill(); err != nil {
				t.Fatal(err)
			}
			err = waitClusterFor(ctx, "the replica's promotion", func() error {
				now, _, err := topo.MasterOf(ctx, key)
				if err != nil {
					return err
				}
				if now != replica {
					return fmt.Errorf("%q's slot is still mastered by %s", key, now)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("after %s was killed: %v", master, err)
			}
			// A figure for docs/topologies.md, not an assertion (no wall-clock
			// assertions in tests).
			t.Logf("%s killed; %s named %q's master %v later", master, replica, key, time.Since(killed).Round(10*time.Millisecond))
			if r, err := topo.Role(ctx, replica); err != nil || r != "master" {
				t.Fatalf("%s is %q (%v) after the fail-over, want master", replica, r, err)
			}
		})
	}
}

// TestRedisClusterMinorityMaster holds what the cluster-master-split rows
// say of Redis 7.0: the lock key's slot master cut off alone from the
// other members goes on taking writes for a while, then refuses them with
// CLUSTERDOWN (it sees it is in a minority of masters), and only after
// that does the majority promote its replica, so the two never both take
// writes. The times are logged as figures, not asserted; the order is.
func TestRedisClusterMinorityMaster(t *testing.T) {
	if err := hosts.Available(); err != nil {
		t.Skip(err)
	}
	decl, err := topology.DeclareRedisCluster(topology.Need{Kind: topology.Redis})
	if err != nil {
		t.Fatal(err)
	}
	decl.Hosts = true
	skipUnlessStartsHere(t, decl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := Start(ctx, decl, External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	const key = "locklab-minority"
	master, _, err := topo.MasterOf(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var index int
	if _, err := fmt.Sscanf(master, "redis-%d", &index); err != nil {
		t.Fatal(err)
	}
	replica := fmt.Sprintf("redis-%d", index+3)
	var alone, rest []*hosts.Host
	for _, n := range topo.Lock(topology.RedisCluster) {
		if n.Name == master {
			alone = append(alone, n.Host)
		} else {
			rest = append(rest, n.Host)
		}
	}
	// The lab reaches both sides from the hosts' switch, which the cut
	// does not touch.
	old, promoted := clusterClient(topo.Node(master)), clusterClient(topo.Node(replica))
	defer old.Close()
	defer promoted.Close()
	if err := netfault.Partition(ctx, alone, rest); err != nil {
		t.Fatal(err)
	}
	defer netfault.Heal(context.WithoutCancel(ctx), append(alone, rest...)...)
	cut := time.Now()
	var refusedAt, promotedAt time.Duration
	err = waitClusterFor(ctx, "the old master's refusal and the replica's promotion", func() error {
		if refusedAt == 0 {
			err := old.Set(ctx, "{"+key+"}", "x", 0).Err()
			switch {
			case err != nil && strings.HasPrefix(err.Error(), "CLUSTERDOWN"):
				refusedAt = time.Since(cut)
			case err != nil:
				return fmt.Errorf("the old master %s answered %v, want OK or CLUSTERDOWN", master, err)
			case promotedAt != 0:
				return fmt.Errorf("the old master %s took a write after %s was promoted", master, replica)
			}
		}
		if promotedAt == 0 {
			if r, err := topo.Role(ctx, replica); err == nil && r == "master" {
				promotedAt = time.Since(cut)
				if refusedAt == 0 {
					return fmt.Errorf("%s was promoted while the old master %s still took writes", replica, master)
				}
			}
		}
		if refusedAt == 0 || promotedAt == 0 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s cut off: it refused writes (CLUSTERDOWN) from %v; %s promoted at %v", master,
		refusedAt.Round(10*time.Millisecond), replica, promotedAt.Round(10*time.Millisecond))
}

// countersOfMasters checks the benchmark's Redis counters on a cluster:
// ten SETs through a cluster client are ten commands on the masters
// (Served), ten SETs by command (CommandCounts), and the masters' time in
// commands grows (CommandTime).
func countersOfMasters(ctx context.Context, t *testing.T, ep topology.Endpoint, key string) {
	t.Helper()
	kind, err := KindOf(topology.Redis)
	if err != nil {
		t.Fatal(err)
	}
	timer, ok := kind.(CommandTimer)
	if !ok {
		t.Fatal("the Redis kind counts no command time")
	}
	counter, ok := kind.(CommandCounter)
	if !ok {
		t.Fatal("the Redis kind counts no commands by name")
	}
	// The client learns the commands and the slots on its first request:
	// set-up, before the counters are read, as the benchmark warms its
	// clients up.
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: ep.Addrs})
	if err := rc.Set(ctx, key, "x", 0).Err(); err != nil {
		rc.Close()
		t.Fatal(err)
	}
	served, err := kind.Served(ctx, ep, false)
	if err != nil {
		t.Fatal(err)
	}
	spent, err := timer.CommandTime(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := counter.CommandCounts(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := rc.Set(ctx, key, "x", 0).Err(); err != nil {
			rc.Close()
			t.Fatal(err)
		}
	}
	rc.Close()
	servedAfter, err := kind.Served(ctx, ep, false)
	if err != nil {
		t.Fatal(err)
	}
	spentAfter, err := timer.CommandTime(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	countsAfter, err := counter.CommandCounts(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	if got := countsAfter["set"] - counts["set"]; got != 10 || countsAfter["info"] != 0 {
		t.Errorf("the masters counted %v SETs for 10 (and %v INFO, which is set-up), want 10 (and none)", got, countsAfter["info"])
	}
	if got := servedAfter - served; got != 10 {
		t.Errorf("the masters served %v commands for 10 SETs, want 10", got)
	}
	if spentAfter <= spent {
		t.Errorf("the masters' time in commands went from %v to %v over 10 SETs", spent, spentAfter)
	}
}
