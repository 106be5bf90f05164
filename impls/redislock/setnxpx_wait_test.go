package redislock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redislock"
	"github.com/locklab/locklab/topology"
)

// A grant its replica has not acknowledged is given back and reported as
// a backend failure, never handed out; once the replica follows again, the
// same acquire is granted. The replica is stopped (SIGSTOP), so the
// master's WAIT runs out with no acknowledgement.
func TestSetNXPXWaitGivesBackAnUnacknowledgedGrant(t *testing.T) {
	ctx := context.Background()
	topo, err := cluster.Start(ctx, topology.Of(topology.RedisNodes(1), topology.ReplicaOf("redis-1")), cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	master, replica := topo.Node("redis-1"), topo.Replica
	rdb := redis.NewClient(&redis.Options{Addr: master.Addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	waitReplicaOnline(t, master.Addr)
	const ttl = time.Second
	lock := redislock.NewSetNXPXWait(redis.NewClient(&redis.Options{Addr: master.Addr, MaxRetries: -1,
		ReadTimeout: ttl / 4, ContextTimeoutEnabled: true}), ttl, nil)
	t.Cleanup(func() { lock.Close() })

	tests := []struct {
		name    string
		stopped bool
		wantErr error
	}{
		{"replica stopped", true, impls.ErrBackend},
		{"replica following", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.stopped {
				if err := replica.Pause(); err != nil {
					t.Fatal(err)
				}
				defer replica.Resume()
			}
			key := "wait-" + tt.name
			lease, err := lock.TryAcquire(ctx, key)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("TryAcquire = %v, %v; want %v", lease, err, tt.wantErr)
				}
				if n, err := rdb.Exists(ctx, "{"+key+"}").Result(); err != nil || n != 0 {
					t.Fatalf("the unacknowledged grant's key is still there (EXISTS %d, %v)", n, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("TryAcquire with the replica following: %v", err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}

// waitReplicaOnline waits until the master at addr has a replica done
// with its first sync: before that, no grant is acknowledged.
func waitReplicaOnline(t *testing.T, addr string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if info, err := rdb.Info(ctx, "replication").Result(); err == nil && strings.Contains(info, "state=online") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replica of %s never finished its first sync", addr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
