package pglock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/pglock"
	"github.com/locklab/locklab/topology"
)

// One PostgreSQL for the whole package: initdb alone takes seconds.
var (
	topoOnce sync.Once
	topo     *cluster.Topology
	topoErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if topo != nil {
		topo.Close()
	}
	cluster.StopAll()
	os.Exit(code)
}

func sharedTopology(t *testing.T) *cluster.Topology {
	t.Helper()
	topoOnce.Do(func() {
		topo, topoErr = cluster.Start(context.Background(), topology.Of(topology.Single(topology.Postgres)), cluster.External{})
	})
	if topoErr != nil {
		t.Fatal(topoErr)
	}
	return topo
}

var keySeq int

func freshKey(prefix string) string {
	keySeq++
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), keySeq)
}

func newLocker(t *testing.T, name, client string, ttl time.Duration) impls.Locker {
	t.Helper()
	spec, err := impls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := spec.New(impls.Config{Servers: sharedTopology(t).Endpoints(), TTL: ttl, ClientID: client})
	if err != nil {
		t.Fatalf("new %s: %v", name, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func admin(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), sharedTopology(t).Endpoints().First(topology.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"pg-optimistic", conformance.Options{KnownDefects: conformance.CounterResetLimitation}},
		{"pg-unique-insert", conformance.Options{}},
		{"pg-advisory", conformance.Options{}},
		{"pg-for-update", conformance.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := impls.Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			conformance.Run(t, spec, sharedTopology(t), tt.opts)
		})
	}
}

// TestServerFaults is the suite's StalledServerGivesUnknownOutcome and
// ServerGoneGivesBackendFailure, with the whole server (postmaster and every
// backend) stopped or killed.
func TestServerFaults(t *testing.T) {
	node := sharedTopology(t).Lock(topology.Postgres)[0]
	for _, name := range []string{"pg-optimistic", "pg-unique-insert", "pg-advisory", "pg-for-update"} {
		t.Run(name+"/StalledServerGivesUnknownOutcome", func(t *testing.T) {
			l := newLocker(t, name, "stall", time.Second)
			resume := pauseServer(t, node)
			actx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := l.TryAcquire(actx, freshKey("stall"))
			cancel()
			resume()
			if !errors.Is(err, impls.ErrUnknown) {
				t.Fatalf("acquire against a stalled server: %v, want ErrUnknown (it may have been granted)", err)
			}
		})
		t.Run(name+"/ServerGoneGivesBackendFailure", func(t *testing.T) {
			l := newLocker(t, name, "gone", time.Second)
			killServer(t, node)
			actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := l.TryAcquire(actx, freshKey("gone"))
			cancel()
			// And once more on a fresh connection: refused at once, surely not applied.
			_, err2 := l.TryAcquire(context.Background(), freshKey("gone"))
			if rerr := node.Restart(context.Background(), true); rerr != nil {
				t.Fatal(rerr)
			}
			if !errors.Is(err, impls.ErrBackend) && !errors.Is(err, impls.ErrUnknown) {
				t.Fatalf("acquire with the server gone: %v, want ErrBackend or ErrUnknown", err)
			}
			if !errors.Is(err2, impls.ErrBackend) {
				t.Fatalf("second acquire with the server gone: %v, want ErrBackend", err2)
			}
			// The restarted server serves the same client again.
			l2, err := l.TryAcquire(context.Background(), freshKey("back"))
			if err != nil {
				t.Fatalf("acquire after the restart: %v", err)
			}
			if err := l2.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Many clients starting at once against an empty database must all get
// their table: CREATE TABLE IF NOT EXISTS alone can fail on a race.
func TestSchemaCreationIsSafeWhenClientsStartTogether(t *testing.T) {
	db := admin(t)
	ctx := context.Background()
	if _, err := db.Exec(ctx, "DROP TABLE IF EXISTS locklab_optimistic_lock, locklab_unique_lock"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pg-optimistic", "pg-unique-insert"} {
		spec, err := impls.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := spec.New(impls.Config{Servers: topo.Endpoints(), TTL: time.Second, ClientID: fmt.Sprint(i)})
				if err == nil {
					l.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("%s client %d: %v", name, i, err)
			}
		}
	}
}

// The source documents' lock table has no expiry: a holder that dies
// without deleting its row blocks the key for good.
func TestUniqueInsertCrashedHolderBlocksForever(t *testing.T) {
	ctx := context.Background()
	key := freshKey("unique-crash")
	holder := newLocker(t, "pg-unique-insert", "holder", time.Second)
	other := newLocker(t, "pg-unique-insert", "other", time.Second)
	if _, err := holder.TryAcquire(ctx, key); err != nil {
		t.Fatal(err)
	}
	holder.Close() // the crash: no release
	time.Sleep(2 * time.Second)

	tests := []struct {
		name    string
		acquire func(context.Context) error
		want    error
	}{
		{"TryAcquire", func(ctx context.Context) error { _, err := other.TryAcquire(ctx, key); return err }, impls.ErrHeld},
		{"Acquire", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			_, err := other.Acquire(ctx, key)
			return err
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.acquire(ctx); !errors.Is(err, tt.want) {
				t.Fatalf("%s 2s after the holder crashed: %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

// A session lock goes with its session: the waiter gets it as soon as the
// holder's connection ends, however it ends, and the holder hears of it,
// at its watcher's next question (logged: how long after the waiter).
func TestSessionLocksFreeWhenHolderSessionEnds(t *testing.T) {
	for _, lock := range []string{"pg-advisory", "pg-for-update"} {
		t.Run(lock, func(t *testing.T) { sessionLockFreesWhenSessionEnds(t, lock) })
	}
}

func sessionLockFreesWhenSessionEnds(t *testing.T, lock string) {
	tests := []struct {
		name string
		end  func(t *testing.T, holder impls.Locker, client string)
	}{
		{"holder closes its connections", func(t *testing.T, holder impls.Locker, _ string) {
			holder.Close()
		}},
		{"server terminates the holder's backend", func(t *testing.T, _ impls.Locker, client string) {
			var n int
			err := admin(t).QueryRow(context.Background(),
				"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
				"locklab-"+lock+"-"+client).Scan(&n)
			if err != nil || n == 0 {
				t.Fatalf("terminate the holder's backend: %d terminated, %v", n, err)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := freshKey(lock + "-end")
			client := fmt.Sprintf("holder-%d", i)
			holder := newLocker(t, lock, client, time.Second)
			waiter := newLocker(t, lock, "waiter", time.Second)
			lease, err := holder.TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := waiter.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
				t.Fatalf("TryAcquire while held: %v, want ErrHeld", err)
			}
			got := make(chan error, 1)
			go func() {
				// A generous bound: the lock has no TTL, so only the end of
				// the session can free it.
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				l, err := waiter.Acquire(wctx, key)
				if err == nil {
					err = l.Release(ctx)
				}
				got <- err
			}()
			time.Sleep(200 * time.Millisecond) // let the waiter block in the server
			tt.end(t, holder, client)
			if err := <-got; err != nil {
				t.Fatalf("waiter after the holder's session ended: %v", err)
			}
			granted := time.Now()
			select {
			case <-lease.Lost():
				t.Logf("%s, %s: the holder learned it lost the lock %v after the waiter had taken and released it (watcher every %v)",
					lock, tt.name, time.Since(granted).Round(time.Millisecond), time.Second/3)
			case <-time.After(5 * time.Second):
				t.Fatal("Lost() not closed after the holder's session ended")
			}
			if err := lease.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("refresh of the lost lease: %v, want ErrNotHeld", err)
			}
			if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("release of the lost lease: %v, want ErrNotHeld", err)
			}
		})
	}
}

// The session holding an advisory lock is the only one that may release it,
// and a live lease's Refresh confirms it with the server.
func TestAdvisoryRefreshSeesTheLock(t *testing.T) {
	ctx := context.Background()
	key := freshKey("advisory-refresh")
	a := newLocker(t, "pg-advisory", "a", time.Second)
	lease, err := a.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh of a held lock: %v", err)
	}
	// An admin session's unlock of the same key changes nothing: the lock
	// is not its own.
	var unlocked bool
	if err := admin(t).QueryRow(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", key).Scan(&unlocked); err != nil || unlocked {
		t.Fatalf("unlock from another session: %v, %v; want false", unlocked, err)
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh after a foreign unlock attempt: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The version is the fencing token: it grows with every grant, also when a
// lease expired and was taken over, and a stale grant can neither release
// nor refresh the lock it lost.
func TestOptimisticVersionsAndStaleLeases(t *testing.T) {
	const ttl = 500 * time.Millisecond
	ctx := context.Background()
	key := freshKey("optimistic")
	a := newLocker(t, "pg-optimistic", "a", ttl)
	b := newLocker(t, "pg-optimistic", "b", ttl)
	c := newLocker(t, "pg-optimistic", "c", ttl)

	var last uint64
	grant := func(t *testing.T, l impls.Locker) impls.Lease {
		t.Helper()
		lease, err := l.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		tok, ok := lease.Token()
		if !ok || tok <= last {
			t.Fatalf("token %d (ok %v), want greater than %d", tok, ok, last)
		}
		last = tok
		return lease
	}

	released := grant(t, a)
	if err := released.Release(ctx); err != nil {
		t.Fatal(err)
	}
	stale := grant(t, a)
	time.Sleep(ttl + ttl/2)
	current := grant(t, b) // takes over the expired lease

	tests := []struct {
		name string
		op   func(impls.Lease) error
	}{
		{"refresh", func(l impls.Lease) error { return l.Refresh(ctx) }},
		{"release", func(l impls.Lease) error { return l.Release(ctx) }},
	}
	for _, tt := range tests {
		t.Run("stale "+tt.name, func(t *testing.T) {
			if err := tt.op(stale); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("stale %s: %v, want ErrNotHeld", tt.name, err)
			}
			if _, err := c.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
				t.Fatalf("after the stale %s a third client got %v, want ErrHeld", tt.name, err)
			}
			if err := current.Refresh(ctx); err != nil {
				t.Fatalf("the current holder's refresh after the stale %s: %v", tt.name, err)
			}
		})
	}
	if err := current.Release(ctx); err != nil {
		t.Fatal(err)
	}
	grant(t, c).Release(ctx)
}
