package guest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/redislock"
	_ "github.com/locklab/locklab/impls/redisson"
	_ "github.com/locklab/locklab/impls/redlock"
)

// Where a guest and a lock of the lab follow the same algorithm on the same
// servers, their clients contend for one lock at once: the guest's name for
// the lock is the lab lock's Redis key (each lab lock maps its key to a key
// of its own shape). Every client marks the section it is in; two marks at
// once are two holders. The lab's locks and the guests run against the same
// real servers, started once for both.
func TestInteroperation(t *testing.T) {
	tests := []struct {
		guest, ours string
		// guestKey is the Redis key the lab's lock keeps key under.
		guestKey func(key string) string
	}{
		{"redis-py", "redis-setnx-px", func(k string) string { return "{" + k + "}" }},
		{"node-redlock", "redis-setnx-px", func(k string) string { return "{" + k + "}" }},
		{"node-redlock-5", "redlock", func(k string) string { return k }},
		{"node-redisson", "redis-reentrant", func(k string) string { return "redisson:{" + k + "}" }},
	}
	for _, tt := range tests {
		t.Run(tt.guest+"+"+tt.ours, func(t *testing.T) {
			gs, err := impls.Lookup("guest:" + tt.guest)
			if err != nil {
				t.Fatal(err)
			}
			lab, err := impls.Lookup(tt.ours)
			if err != nil {
				t.Fatal(err)
			}
			topo := conformance.Topology(t, gs)
			key := fmt.Sprintf("interop-%d", time.Now().UnixNano())
			var inside, overlaps atomic.Int32
			var sections [2]atomic.Int32
			// Sections are short and the TTL long, so no lease expires
			// inside one: an overlap is the two algorithms disagreeing.
			cfg := impls.Config{Servers: topo.Endpoints(), TTL: 5 * time.Second}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 6 {
				side, spec, k := i%2, gs, tt.guestKey(key)
				if side == 1 {
					spec, k = lab, key
				}
				cfg.ClientID = fmt.Sprintf("%s-%d", spec.Name, i)
				l, err := spec.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						actx, acancel := context.WithTimeout(ctx, time.Second)
						lease, err := l.Acquire(actx, k)
						acancel()
						if err != nil {
							continue // the run's end, or a wait that timed out
						}
						if inside.Add(1) > 1 {
							overlaps.Add(1)
						}
						time.Sleep(2 * time.Millisecond)
						inside.Add(-1)
						sections[side].Add(1)
						if err := lease.Release(context.Background()); err != nil {
							errs <- fmt.Errorf("%s: release: %w", spec.Name, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if n := overlaps.Load(); n > 0 {
				t.Errorf("%s and %s held %q at once %d times: not exclusive", tt.guest, tt.ours, key, n)
			}
			if sections[0].Load() == 0 || sections[1].Load() == 0 {
				t.Errorf("one side never held the lock (guest %d sections, ours %d): the test proves nothing",
					sections[0].Load(), sections[1].Load())
			}
			t.Logf("%s: %d sections, %s: %d sections, no overlap", tt.guest, sections[0].Load(), tt.ours, sections[1].Load())
		})
	}
}
