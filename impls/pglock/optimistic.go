package pglock

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const optimisticName = "pg-optimistic"

func init() {
	impls.Register(impls.Spec{
		Name: optimisticName,
		Summary: "one row per key with a version column: a single INSERT ... ON CONFLICT DO UPDATE takes a free or " +
			"expired row (judged by the database's clock) and bumps the version, which is the fencing token; " +
			"refresh and release are conditioned on owner and version",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true},
		Backend:    impls.Backend{Kind: topology.Postgres},
		RoundTrips: impls.RoundTrips{N: 2, Note: "INSERT ... ON CONFLICT DO UPDATE, conditioned release"},
		Footprint:  impls.Footprint{PGTable: "locklab_optimistic_lock", PGVersionIsToken: true},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/pglock/optimistic.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewOptimistic(context.Background(), cfg)
		},
	})
}

// optimisticTable is created by the first client. The version is never
// reset, not even on release, so that every grant of a key gets a greater
// token than every grant before it. expires_at is set from the database's
// now(): every client's expiry is judged by one clock, never by its own.
const optimisticTable = `CREATE TABLE IF NOT EXISTS locklab_optimistic_lock (
	key        text PRIMARY KEY,
	owner      text,
	version    bigint NOT NULL,
	expires_at timestamptz NOT NULL
)`

// optimisticAcquire is the whole acquire in one statement, so it is atomic
// and a timed-out acquire is one ambiguous write, not a half-done pair.
// A missing row is inserted with version 1. An existing row is taken only
// if it is free (released) or its lease ran out by the server's clock; the
// version is bumped in the same step (compare-and-set: the row is rewritten
// only from the state the WHERE saw, under its row lock). No row returned
// means another client holds a live lease.
const optimisticAcquire = `INSERT INTO locklab_optimistic_lock AS l (key, owner, version, expires_at)
VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE
	SET owner = EXCLUDED.owner, version = l.version + 1, expires_at = EXCLUDED.expires_at
	WHERE l.owner IS NULL OR l.expires_at <= now()
RETURNING version`

// optimisticRefresh extends only our own grant (owner and version), and
// only while it is live: an expired lease stays expired even if nobody
// took the lock since.
const optimisticRefresh = `UPDATE locklab_optimistic_lock
SET expires_at = now() + $4::bigint * interval '1 millisecond'
WHERE key = $1 AND owner = $2 AND version = $3 AND expires_at > now()`

// optimisticRelease frees our own live grant and keeps the version, so the
// next grant's token is still greater.
const optimisticRelease = `UPDATE locklab_optimistic_lock
SET owner = NULL, expires_at = '-infinity'
WHERE key = $1 AND owner = $2 AND version = $3 AND expires_at > now()`

// Optimistic is the version-column lock from the source documents ("乐观锁
// 增加版本号"), made a lease: a grant is a compare-and-set that bumps the
// version, and the version doubles as the fencing token.
type Optimistic struct {
	s     *connSettings
	pool  *connPool
	owner string // client ID, prefix of every grant's owner value
}

// NewOptimistic connects and creates the lock table if needed.
func NewOptimistic(ctx context.Context, cfg impls.Config) (*Optimistic, error) {
	s, err := newSettings(optimisticName, cfg, false)
	if err != nil {
		return nil, err
	}
	l := &Optimistic{s: s, pool: newConnPool(s), owner: cfg.ClientID}
	if err := ensureSchema(ctx, l.pool, 1, optimisticTable); err != nil {
		l.pool.Close()
		return nil, err
	}
	return l, nil
}

func (l *Optimistic) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.try(ctx, key)
}

// Acquire polls: a held row notifies nobody when it frees.
func (l *Optimistic) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		lease, err := l.try(ctx, key)
		return lease, 0, err
	})
}

func (l *Optimistic) try(ctx context.Context, key string) (impls.Lease, error) {
	owner, err := newOwner(l.owner)
	if err != nil {
		return nil, impls.Fail(optimisticName, "acquire", impls.ErrBackend, err)
	}
	var version int64
	err = l.exec(ctx, "acquire", func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, optimisticAcquireSQL(), rowKey(key), owner, l.s.ttl.Milliseconds()).Scan(&version)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, impls.Fail(optimisticName, "acquire", impls.ErrHeld, nil)
	}
	if err != nil {
		return nil, err
	}
	return &optimisticLease{l: l, key: key, owner: owner, version: version}, nil
}

// exec runs one write on a pooled connection under the statement timeout.
// Every statement of this lock writes, so a failure after sending is
// classified as a possibly applied write.
func (l *Optimistic) exec(ctx context.Context, op string, f func(context.Context, *pgx.Conn) error) error {
	c, err := l.pool.get(ctx, op)
	if err != nil {
		return err
	}
	octx, cancel := l.s.withOp(ctx)
	err = f(octx, c)
	cancel()
	l.pool.put(c)
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return impls.Classify(ctx, optimisticName, op, err, true)
}

// Close closes the connections; leases stay in the table until they expire.
func (l *Optimistic) Close() error { return l.pool.Close() }

type optimisticLease struct {
	l       *Optimistic
	key     string
	owner   string
	version int64

	mu       sync.Mutex
	released bool
}

func (s *optimisticLease) Key() string           { return s.key }
func (s *optimisticLease) Token() (uint64, bool) { return uint64(s.version), true }
func (s *optimisticLease) Lost() <-chan struct{} { return never }
func (s *optimisticLease) String() string        { return s.key + "#" + strconv.FormatInt(s.version, 10) }

func (s *optimisticLease) Refresh(ctx context.Context) error {
	return s.update(ctx, "refresh", optimisticRefresh, s.l.s.ttl.Milliseconds())
}

func (s *optimisticLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(optimisticName, "release", impls.ErrNotHeld, nil)
	}
	err := s.update(ctx, "release", optimisticReleaseSQL())
	if err == nil || errors.Is(err, impls.ErrNotHeld) {
		s.released = true
	}
	return err
}

// update runs an owner-and-version-conditioned UPDATE; no row changed means
// the grant is no longer ours (expired, re-granted or released).
func (s *optimisticLease) update(ctx context.Context, op, sql string, extra ...any) error {
	var n int64
	args := append([]any{rowKey(s.key), s.owner, s.version}, extra...)
	err := s.l.exec(ctx, op, func(ctx context.Context, c *pgx.Conn) error {
		tag, err := c.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return impls.Fail(optimisticName, op, impls.ErrNotHeld, nil)
	}
	return nil
}
