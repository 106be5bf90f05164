package pglock

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const uniqueName = "pg-unique-insert"

func init() {
	impls.Register(impls.Spec{
		Name: uniqueName,
		Summary: "the source documents' lock table: INSERT a row under a unique key (duplicate key = held), " +
			"owner-checked DELETE to release; no expiry and no waiting at the database",
		Broken: "no expiry: a holder that crashes (or loses its DELETE) leaves its row, and every other client " +
			"gets ErrHeld forever, until someone deletes the row by hand",
		Caps:       impls.Capabilities{},
		Backend:    impls.Backend{Kind: topology.Postgres},
		RoundTrips: impls.RoundTrips{N: 2, Note: "INSERT, DELETE"},
		Footprint:  impls.Footprint{PGTable: "locklab_unique_lock"},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/pglock/unique.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewUniqueInsert(context.Background(), cfg)
		},
	})
}

// uniqueTable holds one row per held lock. acquired_at is for people who
// find a stuck row; nothing reads it, since this lock never expires.
const uniqueTable = `CREATE TABLE IF NOT EXISTS locklab_unique_lock (
	key         text PRIMARY KEY,
	owner       text NOT NULL,
	acquired_at timestamptz NOT NULL DEFAULT now()
)`

// UniqueInsert is the "锁表" of the source documents: the primary key's
// unique index is the whole lock. Its lesson is what it lacks: the row has
// no expiry, so a holder that dies without its DELETE keeps the lock
// forever; the INSERT fails at once instead of waiting, so waiters poll;
// and it is not reentrant.
type UniqueInsert struct {
	s     *connSettings
	pool  *connPool
	owner string
}

// NewUniqueInsert connects and creates the lock table if needed.
func NewUniqueInsert(ctx context.Context, cfg impls.Config) (*UniqueInsert, error) {
	s, err := newSettings(uniqueName, cfg, false)
	if err != nil {
		return nil, err
	}
	l := &UniqueInsert{s: s, pool: newConnPool(s), owner: cfg.ClientID}
	if err := ensureSchema(ctx, l.pool, 2, uniqueTable); err != nil {
		l.pool.Close()
		return nil, err
	}
	return l, nil
}

func (l *UniqueInsert) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.try(ctx, key)
}

// Acquire polls: a failed INSERT queues nobody.
func (l *UniqueInsert) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		lease, err := l.try(ctx, key)
		return lease, 0, err
	})
}

func (l *UniqueInsert) try(ctx context.Context, key string) (impls.Lease, error) {
	owner, err := newOwner(l.owner)
	if err != nil {
		return nil, impls.Fail(uniqueName, "acquire", impls.ErrBackend, err)
	}
	err = l.exec(ctx, "acquire", func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "INSERT INTO locklab_unique_lock (key, owner) VALUES ($1, $2)", rowKey(key), owner)
		return err
	})
	if isPgCode(err, uniqueViolation) {
		return nil, impls.Fail(uniqueName, "acquire", impls.ErrHeld, err)
	}
	if err != nil {
		// An INSERT whose reply was lost may have committed: with no expiry,
		// that row would hold the key forever. The caller is told so
		// (ErrUnknown) and nothing more can be done here.
		return nil, impls.Classify(ctx, uniqueName, "acquire", err, true)
	}
	return &uniqueLease{l: l, key: key, owner: owner}, nil
}

// exec runs one statement on a pooled connection under the statement timeout.
func (l *UniqueInsert) exec(ctx context.Context, op string, f func(context.Context, *pgx.Conn) error) error {
	c, err := l.pool.get(ctx, op)
	if err != nil {
		return err
	}
	octx, cancel := l.s.withOp(ctx)
	err = f(octx, c)
	cancel()
	l.pool.put(c)
	return err
}

// Close closes the connections. The rows of leases still held stay: that is
// the crash this lock cannot recover from.
func (l *UniqueInsert) Close() error { return l.pool.Close() }

type uniqueLease struct {
	l     *UniqueInsert
	key   string
	owner string

	mu       sync.Mutex
	released bool
}

func (s *uniqueLease) Key() string           { return s.key }
func (s *uniqueLease) Token() (uint64, bool) { return 0, false }
func (s *uniqueLease) Lost() <-chan struct{} { return never }
func (s *uniqueLease) String() string        { return s.key + "@" + s.owner }

// Refresh has nothing to extend; it checks the row is still ours (someone
// may have deleted it by hand to clear a stuck lock).
func (s *uniqueLease) Refresh(ctx context.Context) error {
	var ours bool
	err := s.l.exec(ctx, "refresh", func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx,
			"SELECT EXISTS (SELECT 1 FROM locklab_unique_lock WHERE key = $1 AND owner = $2)",
			rowKey(s.key), s.owner).Scan(&ours)
	})
	if err != nil {
		return impls.Classify(ctx, uniqueName, "refresh", err, false)
	}
	if !ours {
		return impls.Fail(uniqueName, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

// Release deletes the row only if it is still ours, so a client can never
// free another client's lock.
func (s *uniqueLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(uniqueName, "release", impls.ErrNotHeld, nil)
	}
	var n int64
	err := s.l.exec(ctx, "release", func(ctx context.Context, c *pgx.Conn) error {
		tag, err := c.Exec(ctx, "DELETE FROM locklab_unique_lock WHERE key = $1 AND owner = $2", rowKey(s.key), s.owner)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return impls.Classify(ctx, uniqueName, "release", err, true)
	}
	s.released = true
	if n == 0 {
		return impls.Fail(uniqueName, "release", impls.ErrNotHeld, nil)
	}
	return nil
}
