package pglock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// A session-bound lock on a server that ends idle sessions: when the
// holder's watcher asks the server less often than the server's idle
// timeout (here a 3s TTL, so every second, against pg-idle-timeouts'
// 500ms), the server ends the holder's session between two questions and
// frees its lock to a waiter, and the holder learns it only at its
// watcher's next question. The test logs how long the waiter held the
// lock before the holder knew: the window in which two clients believe
// they hold it.
func TestIdleTimeoutEndsSessionBoundLocks(t *testing.T) {
	named, err := topology.Lookup(topology.PGIdleTimeoutsName)
	if err != nil {
		t.Fatal(err)
	}
	decl, err := named.Declare(topology.Need{Kind: topology.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := cluster.Start(context.Background(), decl, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	const ttl = 3 * time.Second
	for _, name := range []string{"pg-advisory", "pg-for-update"} {
		t.Run(name, func(t *testing.T) {
			spec, err := impls.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			open := func(client string) impls.Locker {
				l, err := spec.New(impls.Config{Servers: topo.Endpoints(), TTL: ttl, ClientID: client})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				return l
			}
			ctx := context.Background()
			key := freshKey("idle-" + name)
			lease, err := open("holder").TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			granted := time.Now()
			waited := make(chan time.Time, 1)
			go func() {
				// Bounded generously: only the server's timeout can free it.
				wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				l, err := open("waiter").Acquire(wctx, key)
				if err != nil {
					t.Errorf("the waiter was not granted after the holder's session idled past the timeout: %v", err)
					waited <- time.Time{}
					return
				}
				waited <- time.Now()
				l.Release(ctx)
			}()
			var lost time.Time
			select {
			case <-lease.Lost():
				lost = time.Now()
			case <-time.After(20 * time.Second):
				t.Fatal("Lost() not closed after the holder's session idled past the server's timeout")
			}
			other := <-waited
			if other.IsZero() {
				return
			}
			t.Logf("%s: idle timeout %s, watcher every %v: the waiter was granted %v after the holder, "+
				"and the holder learned it lost the lock %v after that",
				name, topology.PGIdleTimeout, ttl/3, other.Sub(granted).Round(time.Millisecond), lost.Sub(other).Round(time.Millisecond))
			if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("the release of a lock the server freed: %v, want ErrNotHeld", err)
			}
		})
	}
}
