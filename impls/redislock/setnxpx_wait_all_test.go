package redislock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redislock"
	"github.com/locklab/locklab/topology"
)

// What "every replica" means to redis-setnx-px-wait-all, against
// redis-setnx-px-wait's one, on a real master with two replicas: with
// both following, both locks grant; with one replica frozen (SIGSTOP: its
// master still counts it, and it never acknowledges), the lock that waits
// for one grants on the other's acknowledgement, and the lock that waits
// for all gives its grant back (the acknowledged-replica-lost fault can
// never strike one of its grants); with that replica dead (its master
// counts one replica), both grant, as Redisson does with the replicas it
// knows up. The last is the door sentinel-rejoining-replica-promoted
// walks through.
func TestSetNXPXWaitAllWaitsForTheReplicasItsMasterCounts(t *testing.T) {
	ctx := context.Background()
	decl := topology.Of(topology.RedisNodes(1),
		topology.Group{Name: topology.ReplicaName, Kind: topology.Redis, Role: topology.Replica, Count: 2, ReplicaOf: "redis-1"})
	if err := cluster.StartsHere(decl); err != nil {
		t.Skip(err)
	}
	topo, err := cluster.Start(ctx, decl, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	master := topo.Node("redis-1").Addr
	waitReplicasCounted(t, master, 2, "online")
	waitReplicasAcknowledge(t, master, 2)
	// An 8 s lease gives each WAIT a second: a following replica answers
	// well within it on a loaded machine (a quarter second was once too
	// short in CI), a frozen one never.
	const ttl = 8 * time.Second
	open := func(t *testing.T, all bool) impls.Locker {
		rdb := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1, ReadTimeout: ttl / 4})
		var l impls.Locker = redislock.NewSetNXPXWait(rdb, ttl, nil)
		if all {
			l = redislock.NewSetNXPXWaitAll(rdb, ttl, nil)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	lagging := topo.Node(topology.ReplicaName + "-2")
	dead := false
	killOnce := func(t *testing.T) {
		if !dead {
			kill(t, lagging, master)
			dead = true
		}
	}
	tests := []struct {
		name    string
		before  func(t *testing.T)
		all     bool
		wantErr error
	}{
		{"both following, waiting for one", nil, false, nil},
		{"both following, waiting for all", nil, true, nil},
		{"one frozen, waiting for one", func(t *testing.T) { freeze(t, lagging) }, false, nil},
		{"one frozen, waiting for all", func(t *testing.T) { freeze(t, lagging) }, true, impls.ErrBackend},
		{"one dead, waiting for one", killOnce, false, nil},
		{"one dead, waiting for all", killOnce, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before(t)
			}
			lease, err := open(t, tt.all).TryAcquire(ctx, "wait-all")
			if (tt.wantErr == nil && err != nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("TryAcquire = %v, %v; want %v", lease, err, tt.wantErr)
			}
			if err != nil {
				direct := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1})
				defer direct.Close()
				if n, err := direct.Exists(ctx, "{wait-all}").Result(); err != nil || n != 0 {
					t.Fatalf("the grant not every replica acknowledged is still on the master (EXISTS %d, %v)", n, err)
				}
				return
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}

// freeze SIGSTOPs n until the test ends.
func freeze(t *testing.T, n *cluster.Node) {
	t.Helper()
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Resume() })
}

// kill SIGKILLs n and waits until the master at addr counts one replica.
func kill(t *testing.T, n *cluster.Node, addr string) {
	t.Helper()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	waitReplicasCounted(t, addr, 1, "")
}

// waitReplicasCounted waits until the master at addr counts n replicas
// (connected_slaves), each in state (any, when empty).
func waitReplicasCounted(t *testing.T, addr string, n int, state string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := rdb.Info(context.Background(), "replication").Result()
		if err == nil && strings.Count(info, "state="+state) == n && strings.Contains(info, "connected_slaves:"+strconv.Itoa(n)+"\r\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the master at %s never counted %d replicas: %q, %v", addr, n, info, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
