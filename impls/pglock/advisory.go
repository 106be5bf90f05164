package pglock

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const advisoryName = "pg-advisory"

func init() {
	impls.Register(impls.Spec{
		Name: advisoryName,
		Summary: "session advisory lock on the key's 64-bit hash, held on one dedicated connection per lease; " +
			"waiters block in pg_advisory_lock; no TTL: the server frees it when the holder's session ends, " +
			"and Lost() fires when a ping finds the connection dead",
		Caps:       impls.Capabilities{LostNotify: true, NoPolling: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.Postgres},
		RoundTrips: impls.RoundTrips{N: 2, Note: "pg_advisory_lock, pg_advisory_unlock"},
		Footprint:  impls.Footprint{PGAdvisory: true},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/pglock/advisory.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewAdvisory(context.Background(), cfg)
		},
	})
}

// The key is hashed by the server with hashtextextended, a 64-bit hash, so
// that the whole bigint key space is used: the 32-bit hashtext would make
// two of some 65,000 keys share a lock. Two keys that do collide share one
// lock, which costs concurrency, never exclusion.
const (
	advisoryTry    = "SELECT pg_try_advisory_lock(hashtextextended($1, 0))"
	advisoryWait   = "SELECT pg_advisory_lock(hashtextextended($1, 0))"
	advisoryUnlock = "SELECT pg_advisory_unlock(hashtextextended($1, 0))"
	// A bigint advisory key shows in pg_locks split in two: classid holds
	// the high 32 bits, objid the low 32, and objsubid is 1.
	advisoryHeld = `SELECT EXISTS (SELECT 1 FROM pg_locks
	WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
	AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0))`
)

// Advisory is PostgreSQL's session advisory lock. A session lock belongs
// to the server session, that is to one connection, not to the client: it
// is freed by pg_advisory_unlock on that same connection or when the
// session ends. A connection pool breaks this twice over: the unlock may
// run on another of the pool's connections (where it fails, and the lock
// stays held by an idle pooled session for as long as the pool lives), and
// the pool may hand the locked connection to unrelated code, which then
// holds our lock, or lets a second acquire of the same key succeed on it,
// since the lock is reentrant within its session. So every lease owns one
// connection from grant to release; the idle connections kept here hold no
// lock, and one returns to them only after its unlock succeeded.
type Advisory struct {
	s    *connSettings
	pool *connPool
}

// NewAdvisory connects once, to fail early if the server is unreachable and
// to have a session ready for the first acquire.
func NewAdvisory(ctx context.Context, cfg impls.Config) (*Advisory, error) {
	// cancelOnCtx: a blocked pg_advisory_lock is ended by a cancel request,
	// which keeps the connection; cutting the socket instead would leave
	// the server's backend waiting, and it would take the lock once it is
	// free and hold it until it noticed the dead socket.
	s, err := newSettings(advisoryName, cfg, true)
	if err != nil {
		return nil, err
	}
	l := &Advisory{s: s, pool: newConnPool(s)}
	c, err := l.pool.get(ctx, "connect")
	if err != nil {
		l.pool.Close()
		return nil, err
	}
	l.pool.put(c)
	return l, nil
}

func (l *Advisory) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	c, err := l.pool.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	octx, cancel := l.s.withOp(ctx)
	var got bool
	err = c.QueryRow(octx, advisoryTry, key).Scan(&got)
	cancel()
	if err != nil {
		// The lock may have been granted before the statement failed, and a
		// session lock survives a failed statement: ending the session is
		// the one sure way to give it back.
		l.pool.discard(c)
		return nil, impls.Classify(ctx, advisoryName, "acquire", err, true)
	}
	if !got {
		l.pool.put(c)
		return nil, impls.Fail(advisoryName, "acquire", impls.ErrHeld, nil)
	}
	return l.newLease(c, key), nil
}

// Acquire waits inside the server (pg_advisory_lock), which grants the lock
// to a waiter as soon as the holder releases it or its session ends: no
// polling. When ctx ends, pgx sends a cancel request that ends the wait.
func (l *Advisory) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	c, err := l.pool.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	_, err = c.Exec(ctx, advisoryWaitSQL(), key)
	if err == nil {
		return l.newLease(c, key), nil
	}
	// The wait may have been granted just before it was cancelled. If the
	// connection survived, unlocking everything on it settles that (it held
	// no other lock), and the outcome is known: not held.
	if !c.IsClosed() {
		cctx, cancel := l.s.withOp(context.Background())
		_, uerr := c.Exec(cctx, "SELECT pg_advisory_unlock_all()")
		cancel()
		if uerr == nil {
			l.pool.put(c)
			kind := impls.ContextErr(ctx)
			if kind == nil {
				kind = impls.ErrBackend
			}
			return nil, impls.Fail(advisoryName, "acquire", kind, err)
		}
	}
	// Otherwise closing the session frees whatever it may hold, once the
	// server notices; until then the outcome is unknown.
	l.pool.discard(c)
	return nil, impls.Classify(ctx, advisoryName, "acquire", err, true)
}

// Close ends every session, leases' included, without unlocking: to the
// server that is a crash, and it frees the locks with the sessions.
func (l *Advisory) Close() error { return l.pool.Close() }

type advisoryLease struct {
	session
	l   *Advisory
	key string
}

// newLease starts the watcher: it pings the lease's connection every
// TTL/3 until release, and a failed ping means the session is gone (server
// crash, connection cut, backend terminated) or soon will be, and with it
// the lock.
func (l *Advisory) newLease(c *pgx.Conn, key string) *advisoryLease {
	s := &advisoryLease{session: newSession(l.pool, c), l: l, key: key}
	s.watch(l.s.ttl, func() bool {
		ctx, cancel := l.s.withOp(context.Background())
		defer cancel()
		return s.conn.Ping(ctx) == nil && !s.conn.IsClosed()
	})
	return s
}

func (s *advisoryLease) Key() string           { return s.key }
func (s *advisoryLease) Token() (uint64, bool) { return 0, false }
func (s *advisoryLease) String() string        { return s.key + "@advisory" }

// Refresh has no TTL to extend; it asks the server whether this session
// still holds the lock.
func (s *advisoryLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || s.isLost() {
		return impls.Fail(advisoryName, "refresh", impls.ErrNotHeld, nil)
	}
	octx, cancel := s.l.s.withOp(ctx)
	var held bool
	err := s.conn.QueryRow(octx, advisoryHeld, s.key).Scan(&held)
	cancel()
	if err != nil {
		if s.conn.IsClosed() {
			// The session is gone, and a session lock goes with it.
			s.loseLocked()
			return impls.Fail(advisoryName, "refresh", impls.ErrNotHeld, err)
		}
		return impls.Classify(ctx, advisoryName, "refresh", err, false)
	}
	if !held {
		s.loseLocked()
		return impls.Fail(advisoryName, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

// Release unlocks on the lease's own connection; only that session can.
func (s *advisoryLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(advisoryName, "release", impls.ErrNotHeld, nil)
	}
	s.releaseLocked()
	if s.isLost() {
		return impls.Fail(advisoryName, "release", impls.ErrNotHeld, nil)
	}
	if releaseKeepsLock() {
		s.l.pool.put(s.conn)
		return nil
	}
	s.l.pool.mu.Lock()
	closed := s.l.pool.closed
	s.l.pool.mu.Unlock()
	if closed || s.conn.IsClosed() {
		// Closed before the unlock was sent (the Locker's Close cuts every
		// lease's socket): the session, and the lock with it, is gone;
		// nothing is unknown.
		s.l.pool.discard(s.conn)
		return impls.Fail(advisoryName, "release", impls.ErrNotHeld, errors.New("the lease's session is closed"))
	}
	octx, cancel := s.l.s.withOp(ctx)
	var unlocked bool
	err := s.conn.QueryRow(octx, advisoryUnlock, s.key).Scan(&unlocked)
	cancel()
	if err != nil {
		// Ending the session frees the lock if the unlock did not; whether
		// the lock was still ours until then is unknown.
		s.l.pool.discard(s.conn)
		return impls.Classify(ctx, advisoryName, "release", err, true)
	}
	if !unlocked {
		s.l.pool.discard(s.conn)
		return impls.Fail(advisoryName, "release", impls.ErrNotHeld,
			fmt.Errorf("pg_advisory_unlock: this session did not hold %q", s.key))
	}
	// The session holds no lock any more: it may serve the next acquire.
	s.l.pool.put(s.conn)
	return nil
}
