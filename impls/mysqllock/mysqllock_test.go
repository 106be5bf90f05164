package mysqllock_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/mysqllock"
	"github.com/locklab/locklab/topology"
)

// One MariaDB for the whole package: mariadb-install-db alone takes seconds.
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
		topo, topoErr = cluster.Start(context.Background(), topology.Of(topology.Single(topology.MySQL)), cluster.External{})
	})
	if topoErr != nil {
		t.Fatal(topoErr)
	}
	return topo
}

var keySeq atomic.Int64

func freshKey(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), keySeq.Add(1))
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

// admin is a session of the test's own, as an operator's client.
func admin(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", sharedTopology(t).Endpoints().First(topology.MySQL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"mysql-lock-table", conformance.Options{}},
		{"mysql-get-lock", conformance.Options{}},
		{"mysql-for-update", conformance.Options{}},
		{"mysql-optimistic", conformance.Options{KnownDefects: conformance.CounterResetLimitation}},
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

// The source documents' lock table has no expiry: a holder that dies
// without deleting its row blocks the key for good, though the server ended
// its session, since the row is committed data and not the session's.
func TestLockTableCrashedHolderBlocksForever(t *testing.T) {
	ctx := context.Background()
	key := freshKey("table-crash")
	holder := newLocker(t, "mysql-lock-table", "holder", time.Second)
	other := newLocker(t, "mysql-lock-table", "other", time.Second)
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

// A lock bound to a session (GET_LOCK, or a row lock held by the session's
// open transaction) goes with the session: the waiter gets it as soon as
// the holder's session ends, however it ends, and the holder hears of it.
func TestSessionLocksFreeWhenTheHolderSessionEnds(t *testing.T) {
	ends := []struct {
		name string
		end  func(t *testing.T, holder impls.Locker, key string)
	}{
		{"holder closes its connections", func(t *testing.T, holder impls.Locker, _ string) {
			holder.Close()
		}},
		{"an operator kills the holder's session", func(t *testing.T, _ impls.Locker, key string) {
			// The holder is the one session other than the waiter's and
			// ours that runs as the holder's program: found by the one
			// thing it is doing, holding the key.
			db := admin(t)
			var id int64
			if err := db.QueryRow("SELECT COALESCE(IS_USED_LOCK(?), 0)", "locklab:"+key).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if id == 0 {
				// A row lock: the holder is the session whose transaction is
				// open and not waiting.
				err := db.QueryRow(`SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX
					WHERE trx_state = 'RUNNING' ORDER BY trx_started LIMIT 1`).Scan(&id)
				if err != nil {
					t.Fatalf("find the holder's transaction: %v", err)
				}
			}
			if _, err := db.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, lock := range []string{"mysql-get-lock", "mysql-for-update"} {
		for i, tt := range ends {
			t.Run(lock+"/"+tt.name, func(t *testing.T) {
				ctx := context.Background()
				key := freshKey("session-end")
				holder := newLocker(t, lock, fmt.Sprintf("holder-%d", i), time.Second)
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
					// A generous bound: the lock has no TTL, so only the end
					// of the session can free it.
					wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					l, err := waiter.Acquire(wctx, key)
					if err == nil {
						err = l.Release(ctx)
					}
					got <- err
				}()
				time.Sleep(200 * time.Millisecond) // let the waiter queue in the server
				tt.end(t, holder, key)
				if err := <-got; err != nil {
					t.Fatalf("waiter after the holder's session ended: %v", err)
				}
				select {
				case <-lease.Lost():
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
}

// Only the session holding a GET_LOCK name can release it: an operator's
// RELEASE_LOCK of the same name on another session changes nothing.
func TestGetLockIsTheSessions(t *testing.T) {
	ctx := context.Background()
	key := freshKey("get-lock-own")
	lease, err := newLocker(t, "mysql-get-lock", "a", time.Second).TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var released sql.NullInt64
	if err := admin(t).QueryRow("SELECT RELEASE_LOCK(?)", "locklab:"+key).Scan(&released); err != nil || !released.Valid || released.Int64 != 0 {
		t.Fatalf("RELEASE_LOCK from another session: %v, %v; want 0 (held by another session)", released, err)
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh after a foreign release attempt: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Keys MariaDB would confuse as GET_LOCK names or in a collated column are
// distinct locks: case, trailing spaces, a NUL byte, and keys too long for
// a name or a key column.
func TestKeysMariaDBWouldConfuse(t *testing.T) {
	long := func(c byte) string {
		b := make([]byte, 300)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	pairs := []struct{ a, b string }{
		{"Key", "key"},
		{"k", "k "},
		{"a\x00b", "a\x00c"},
		{"a\x00b", "a"},
		{long('x'), long('x') + "y"},
	}
	ctx := context.Background()
	for _, lock := range []string{"mysql-get-lock", "mysql-lock-table", "mysql-for-update", "mysql-optimistic"} {
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%s/%q-%q", lock, p.a[:min(len(p.a), 8)], p.b[:min(len(p.b), 8)]), func(t *testing.T) {
				prefix := freshKey("confuse")
				a := newLocker(t, lock, "a", time.Second)
				b := newLocker(t, lock, "b", time.Second)
				la, err := a.TryAcquire(ctx, prefix+p.a)
				if err != nil {
					t.Fatal(err)
				}
				lb, err := b.TryAcquire(ctx, prefix+p.b)
				if err != nil {
					t.Fatalf("a different key while the first is held: %v", err)
				}
				for _, l := range []impls.Lease{la, lb} {
					if err := l.Release(ctx); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// The version is the fencing token: it grows with every grant, also when a
// lease expired and was taken over by the server's clock, and a stale grant
// can neither release nor refresh the lock it lost.
func TestOptimisticVersionsAndStaleLeases(t *testing.T) {
	const ttl = 500 * time.Millisecond
	ctx := context.Background()
	key := freshKey("optimistic")
	a := newLocker(t, "mysql-optimistic", "a", ttl)
	b := newLocker(t, "mysql-optimistic", "b", ttl)
	c := newLocker(t, "mysql-optimistic", "c", ttl)

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
	if err := grant(t, c).Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A session the server ended while it sat idle (KILL, wait_timeout, a
// restart) is never used again: the next acquire and release take a fresh
// one and succeed, where a statement sent on the dead one would fail with
// an unknown outcome.
func TestIdleSessionsEndedByTheServerAreNotUsed(t *testing.T) {
	ctx := context.Background()
	for _, lock := range []string{"mysql-get-lock", "mysql-lock-table", "mysql-for-update", "mysql-optimistic"} {
		t.Run(lock, func(t *testing.T) {
			key := freshKey("idle-killed")
			l := newLocker(t, lock, "idle", time.Second)
			lease, err := l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
			// Every session but the operator's own: the locker's idle ones.
			db := admin(t)
			db.SetMaxOpenConns(1)
			rows, err := db.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon'")
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			rows.Close()
			for _, id := range ids {
				// A session of an earlier test's closed locker may end
				// between the list and the kill (unknown thread id).
				if _, err := db.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil && !strings.Contains(err.Error(), "1094") {
					t.Fatal(err)
				}
			}
			time.Sleep(100 * time.Millisecond) // the kills reach the sockets
			lease, err = l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("acquire after the server ended %d idle sessions: %v", len(ids), err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("release after the server ended the idle sessions: %v", err)
			}
		})
	}
}
