package nemesis

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/topology"
)

// TestPromotionRecordReadsTheServers reads a fail-over's record off a real
// Redis master and replica, as a fail-over fault does: the master's
// offset at the strike against the promoted replica's own offset at its
// promotion. A replica promoted (REPLICAOF NO ONE) after acknowledging
// every write had it all; a write the master makes after that is one it
// lacks. No hosts and no Sentinel: most of its time is the replica's
// first sync.
func TestPromotionRecordReadsTheServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topo, err := cluster.Start(ctx, topology.Declaration{Groups: []topology.Group{topology.RedisNodes(1), topology.ReplicaOf("redis-1")}}, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	sys := topoSystem{topo}
	master, replica := topo.Lock(topology.Redis)[0], topo.Node(ReplicaName)
	c := redis.NewClient(&redis.Options{Addr: master.Addr})
	defer c.Close()
	// The replica may still be syncing when the topology is up: ask
	// until it acknowledges (a bound from the test's context).
	acked := func() {
		for {
			if n, err := c.Wait(ctx, 1, time.Second).Result(); err == nil && n == 1 {
				return
			}
			if ctx.Err() != nil {
				t.Fatal("the replica did not acknowledge the write")
			}
		}
	}
	if err := c.Set(ctx, "lock", "client-0", 0).Err(); err != nil {
		t.Fatal(err)
	}
	acked()

	// The replica stops following (its promotion) with every write; then
	// the master writes on, and a record made at that strike finds the
	// same promoted replica without the write.
	r := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer r.Close()
	tests := []struct {
		name   string
		before func()
		lacked bool
	}{
		{"a replica promoted with every write had everything", func() {
			markStrike(ctx, master, []*cluster.Node{replica})
			if err := r.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a write after the replica stopped following is lacked", func() {
			if err := c.Incr(ctx, "fence").Err(); err != nil {
				t.Fatal(err)
			}
			markStrike(ctx, master, []*cluster.Node{replica})
		}, true},
	}
	for _, tc := range tests {
		tc.before()
		markPromotedAmong(ctx, sys, master)
		rec := TakePromotion(sys, master.Name)
		if rec == nil || !rec.Known() || rec.Promoted != ReplicaName || rec.Lacked() != tc.lacked {
			t.Fatalf("%s: record %+v, want %s promoted, lacked %v", tc.name, rec, ReplicaName, tc.lacked)
		}
		t.Logf("%s: %s", tc.name, rec)
	}
}
