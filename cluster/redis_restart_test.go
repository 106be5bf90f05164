package cluster

import (
	"context"
	"testing"
	"time"
)

// TestRedisRestartsInItsLastRole: a Redis server restarts in the role its
// config file last held, as one on disk does in production. Sentinel makes
// a replica a master with REPLICAOF NO ONE and CONFIG REWRITE; restarted
// (empty or not), that server is a master, not a replica of its old
// master. Given its role on the command line, it came back a replica.
// The lab's own scripted fail-over (PromoteReplica) promotes as Sentinel
// does.
func TestRedisRestartsInItsLastRole(t *testing.T) {
	if ContainerMode() {
		t.Skip("container mode starts no Sentinel, the one that rewrites a server's config")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	master, err := StartRedis(ctx, RedisOptions{Name: "redis-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer master.Stop()
	replica, err := StartRedis(ctx, RedisOptions{Name: "redis-replica-1", ReplicaOf: master})
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Stop()
	role := func() string {
		t.Helper()
		r, err := (redisKind{}).Replication(ctx, replica)
		if err != nil {
			t.Fatal(err)
		}
		return r.Role
	}
	if got := role(); got != "replica" {
		t.Fatalf("started as %s, want replica", got)
	}
	for _, keepData := range []bool{true, false} {
		if err := replica.Restart(ctx, keepData); err != nil {
			t.Fatal(err)
		}
		if got := role(); got != "replica" {
			t.Fatalf("restarted (keep data %v) before any rewrite as %s, want replica", keepData, got)
		}
	}
	// The lab's scripted fail-over sends what Sentinel sends a replica it
	// promotes: REPLICAOF NO ONE and CONFIG REWRITE.
	if err := (redisKind{}).PromoteReplica(ctx, replica); err != nil {
		t.Fatal(err)
	}
	for _, keepData := range []bool{true, false} {
		if err := replica.Restart(ctx, keepData); err != nil {
			t.Fatal(err)
		}
		if got := role(); got != "master" {
			t.Errorf("restarted (keep data %v) after Sentinel's rewrite as %s, want master", keepData, got)
		}
	}
}
