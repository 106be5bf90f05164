// Package conformance is the behaviour every Locker must show, run against
// real servers: each implementation's test calls Run. Deliberately broken
// variants declare where they break (Options), and the suite then asserts
// the broken behaviour instead, so the lesson is tested too.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
)

// Options tune the suite to one implementation.
type Options struct {
	TTL time.Duration // lease TTL / session timeout; default 1s
	// ForeignRelease: a stale lease's release frees the new holder's lock
	// (redis-del-release, redis-get-del-release, redis-getset).
	ForeignRelease bool
	// SkipContention skips the porcupine contention run (for peers measured elsewhere).
	SkipContention bool
	// SkipPausedServer skips the unknown-outcome check with a SIGSTOPped
	// server, for clients whose first request against a stalled server is a
	// read (so "backend failure" is the honest answer) or that queue
	// requests across a stall rather than fail.
	SkipPausedServer bool
	// AbandonedWaitTakesItsTurn: an acquire abandoned by its context stays
	// queued until its turn comes and then passes the lock on (go-zookeeper's
	// zk.Lock cannot cancel a wait). The check then waits for the lock with
	// a bounded Acquire instead of expecting it free at once.
	AbandonedWaitTakesItsTurn bool
}

var keySeq atomic.Int64

func freshKey(t *testing.T) string {
	return fmt.Sprintf("conf-%d-%d", time.Now().UnixNano(), keySeq.Add(1))
}

// Run runs every check that applies to spec. topo must hold the servers the
// implementation needs (started by the caller, shared by the checks); the
// last check kills and restarts them.
func Run(t *testing.T, spec impls.Spec, topo *cluster.Topology, o Options) {
	if o.TTL <= 0 {
		o.TTL = time.Second
	}
	seq := 0
	newLocker := func(t *testing.T) impls.Locker {
		t.Helper()
		seq++
		l, err := spec.New(impls.Config{
			Redis: topo.RedisAddrs, ZooKeeper: topo.ZooKeeperAddr, Postgres: topo.PostgresDSN,
			TTL: o.TTL, ClientID: fmt.Sprintf("conformance-%d", seq),
		})
		if err != nil {
			t.Fatalf("new %s: %v", spec.Name, err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	ctx := context.Background()

	t.Run("TryAcquireReturnsHeldAtOnce", func(t *testing.T) {
		key := freshKey(t)
		a, b := newLocker(t), newLocker(t)
		lease := mustAcquire(t, a, key)
		// A TryAcquire that blocked would run into this deadline instead.
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := b.TryAcquire(tctx, key); !errors.Is(err, impls.ErrHeld) {
			t.Fatalf("TryAcquire of a held lock: %v, want ErrHeld", err)
		}
		mustRelease(t, lease)
		l2, err := b.TryAcquire(ctx, key)
		if err != nil {
			t.Fatalf("TryAcquire after release: %v", err)
		}
		mustRelease(t, l2)
	})

	t.Run("ReleaseTwiceIsNotHeld", func(t *testing.T) {
		lease := mustAcquire(t, newLocker(t), freshKey(t))
		mustRelease(t, lease)
		if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
			t.Fatalf("second release: %v, want ErrNotHeld", err)
		}
	})

	t.Run("BlockedAcquireEndsWithContextAndLeavesNothing", func(t *testing.T) {
		key := freshKey(t)
		a, b, c := newLocker(t), newLocker(t), newLocker(t)
		lease := mustAcquire(t, a, key)
		bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := b.Acquire(bctx, key)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("blocked Acquire: %v, want context.DeadlineExceeded", err)
		}
		mustRelease(t, lease)
		// Nothing of b's abandoned wait may stand in c's way.
		var l3 impls.Lease
		if o.AbandonedWaitTakesItsTurn {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			l3, err = c.Acquire(wctx, key)
			cancel()
		} else {
			l3, err = c.TryAcquire(ctx, key)
		}
		if err != nil {
			t.Fatalf("TryAcquire after the abandoned wait: %v", err)
		}
		mustRelease(t, l3)
	})

	if spec.Caps.Fencing {
		t.Run("FencingTokensIncrease", func(t *testing.T) {
			key := freshKey(t)
			lockers := []impls.Locker{newLocker(t), newLocker(t)}
			var last uint64
			for i := 0; i < 20; i++ {
				lease := mustAcquire(t, lockers[i%2], key)
				tok, ok := lease.Token()
				if !ok {
					t.Fatal("a fencing lock returned no token")
				}
				if tok <= last {
					t.Fatalf("grant %d got token %d, not greater than the previous %d", i, tok, last)
				}
				last = tok
				mustRelease(t, lease)
			}
		})
	}

	if spec.Caps.Reentrant {
		t.Run("Reentrant", func(t *testing.T) {
			key := freshKey(t)
			a, b := newLocker(t), newLocker(t)
			l1 := mustAcquire(t, a, key)
			l2, err := a.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("re-entering a held lock: %v", err)
			}
			mustRelease(t, l2)
			if _, err := b.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
				t.Fatalf("after one of two releases another client got: %v, want ErrHeld", err)
			}
			mustRelease(t, l1)
			l3, err := b.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("after both releases: %v", err)
			}
			mustRelease(t, l3)
		})
	}

	if spec.Caps.Expiry && !spec.Caps.Renewal {
		t.Run("LeaseExpiresAndRefreshCannotReviveIt", func(t *testing.T) {
			key := freshKey(t)
			a, b := newLocker(t), newLocker(t)
			lease := mustAcquire(t, a, key)
			if err := lease.Refresh(ctx); err != nil {
				t.Fatalf("refresh of a live lease: %v", err)
			}
			time.Sleep(o.TTL + o.TTL/2)
			if err := lease.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("refresh after the TTL: %v, want ErrNotHeld", err)
			}
			l2, err := b.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("TryAcquire after the TTL: %v", err)
			}
			mustRelease(t, l2)
		})

		t.Run("OnlyTheOwnersReleaseSucceeds", func(t *testing.T) {
			key := freshKey(t)
			a, b, c := newLocker(t), newLocker(t), newLocker(t)
			stale := mustAcquire(t, a, key)
			time.Sleep(o.TTL + o.TTL/2)
			current := mustAcquire(t, b, key)
			err := stale.Release(ctx)
			_, cerr := c.TryAcquire(ctx, key)
			if o.ForeignRelease {
				// The lesson: the stale holder deleted the new holder's lock.
				if err != nil || cerr != nil {
					t.Fatalf("broken release: stale release %v, third client %v; want both nil (the flaw)", err, cerr)
				}
				return
			}
			if !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("stale lease's release: %v, want ErrNotHeld", err)
			}
			if !errors.Is(cerr, impls.ErrHeld) {
				t.Fatalf("after a stale release a third client got %v, want ErrHeld", cerr)
			}
			mustRelease(t, current)
		})
	}

	if !o.SkipContention {
		t.Run("ContentionIsLinearizable", func(t *testing.T) {
			out, err := scenarios.Run(ctx, "contention", scenarios.Options{
				Impl: spec, Clients: 8, Sections: 2000, TTL: 2 * time.Second, OutDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != scenarios.Safe || out.Sections < 2000 {
				t.Fatalf("contention: %s over %d sections (%s), want safe over 2000", out.Verdict, out.Sections, out.HTML)
			}
		})
	}

	if !o.SkipPausedServer && len(topo.Nodes()) > 0 {
		t.Run("StalledServerGivesUnknownOutcome", func(t *testing.T) {
			key := freshKey(t)
			l := newLocker(t)
			for _, n := range lockNodes(topo) {
				if err := n.Pause(); err != nil {
					t.Fatal(err)
				}
			}
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := l.TryAcquire(actx, key)
			cancel()
			for _, n := range lockNodes(topo) {
				if err := n.Resume(); err != nil {
					t.Fatal(err)
				}
			}
			if !errors.Is(err, impls.ErrUnknown) {
				t.Fatalf("acquire against a stalled server: %v, want ErrUnknown (it may have been granted)", err)
			}
		})
	}

	if len(topo.Nodes()) > 0 {
		t.Run("ServerGoneGivesBackendFailure", func(t *testing.T) {
			key := freshKey(t)
			l := newLocker(t)
			nodes := lockNodes(topo)
			for _, n := range nodes {
				if err := n.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := l.TryAcquire(actx, key)
			cancel()
			for _, n := range nodes {
				if rerr := n.Restart(ctx, true); rerr != nil {
					t.Fatal(rerr)
				}
			}
			if !errors.Is(err, impls.ErrBackend) && !errors.Is(err, impls.ErrUnknown) {
				t.Fatalf("acquire with the server gone: %v, want ErrBackend", err)
			}
		})
	}
}

// lockNodes are the topology's nodes other than the resource.
func lockNodes(topo *cluster.Topology) []*cluster.Node {
	var out []*cluster.Node
	for _, n := range topo.Nodes() {
		if n != topo.Resource {
			out = append(out, n)
		}
	}
	return out
}

func mustAcquire(t *testing.T, l impls.Locker, key string) impls.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return lease
}

func mustRelease(t *testing.T, lease impls.Lease) {
	t.Helper()
	if err := lease.Release(context.Background()); err != nil {
		t.Fatalf("release %s: %v", lease.Key(), err)
	}
}

// Topology starts the servers spec needs for the suite and stops them when
// the test ends.
func Topology(t *testing.T, spec impls.Spec) *cluster.Topology {
	t.Helper()
	topo, err := cluster.Start(context.Background(), cluster.Needs{
		RedisNodes: spec.Backend.RedisNodes, ZooKeeper: spec.Backend.ZooKeeper, Postgres: spec.Backend.Postgres,
	}, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	return topo
}
