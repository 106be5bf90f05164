package workload_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
	"github.com/locklab/locklab/topology"
	"github.com/locklab/locklab/workload"
)

// Contend on its own, against a real Redis: a correct lock runs every
// section with no failure and a history the checker passes; no lock at
// all leaves a history the checker catches; a key someone else holds for
// longer than the acquire bound ends the run as stuck, not as an error.
func TestContend(t *testing.T) {
	ctx := context.Background()
	n, err := cluster.StartRedis(ctx, cluster.RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	const (
		ttl      = 20 * time.Second
		clients  = 4
		sections = 200
	)
	tests := []struct {
		name string
		impl string
		// heldElsewhere: another client takes the key first and keeps it
		// past the bound.
		heldElsewhere bool
		bound         time.Duration
		wantOutcome   porcupine.CheckResult
		wantStuck     bool
		wantAll       bool // every section ran and wrote
	}{
		{name: "correct lock", impl: "redis-setnx-px", bound: ttl, wantOutcome: porcupine.Ok, wantAll: true},
		{name: "no lock", impl: "none", bound: ttl, wantOutcome: porcupine.Illegal},
		// The bound is a twentieth of the holder's TTL: the lease cannot lapse in it.
		{name: "held elsewhere", impl: "redis-setnx-px", heldElsewhere: true, bound: ttl / 20, wantOutcome: porcupine.Ok, wantStuck: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := impls.Lookup(tt.impl)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("contend-%d", i)
			rec := lin.NewRecorder(nil)
			if tt.heldElsewhere {
				l, err := spec.New(impls.Config{Servers: topology.At(topology.Redis, n.Addr), TTL: ttl, ClientID: "holder"})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				lease, err := l.Acquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				defer lease.Release(ctx)
			}
			cs := make([]*workload.Client, clients)
			for id := range cs {
				l, err := spec.New(impls.Config{Servers: topology.At(topology.Redis, n.Addr), TTL: ttl, ClientID: fmt.Sprintf("client-%d", id)})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				counter := resource.New(n.Addr, key)
				defer counter.Close()
				// Work widens the window in which two holders would overlap.
				cs[id] = &workload.Client{ID: id, Key: key, Locker: l, Counter: counter, Rec: rec,
					Work: func() time.Duration { return 200 * time.Microsecond }}
			}
			res := workload.Contend(ctx, cs, sections, tt.bound)
			if (res.Stuck != nil) != tt.wantStuck {
				t.Fatalf("stuck = %v, want stuck %v", res.Stuck, tt.wantStuck)
			}
			if !tt.wantStuck && res.Failures != 0 {
				t.Fatalf("%d acquires failed, want none", res.Failures)
			}
			evs := rec.Events()
			if got := lin.Check(evs, time.Minute).Outcome; got != tt.wantOutcome {
				t.Fatalf("checker says %v, want %v", got, tt.wantOutcome)
			}
			v, err := resource.New(n.Addr, key).Value(ctx)
			if err != nil {
				t.Fatal(err)
			}
			grants := 0
			for _, ev := range evs {
				if ev.Kind == lin.Acquired {
					grants++
				}
			}
			switch {
			case tt.wantAll && (grants != sections || v != sections):
				t.Fatalf("%d grants, counter %d, want %d of each", grants, v, sections)
			case tt.wantStuck && (grants != 0 || v != 0):
				t.Fatalf("%d grants, counter %d while the key was held elsewhere, want none", grants, v)
			}
		})
	}
}
