package mysqllock

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const optimisticName = "mysql-optimistic"

func init() {
	impls.Register(impls.Spec{
		Name: optimisticName,
		Summary: "one row per key with a version column: an UPDATE takes a free or expired row (judged by the " +
			"server's clock) and bumps the version, which is the fencing token; refresh and release are " +
			"conditioned on owner and version",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true},
		Backend:    impls.Backend{Kind: topology.MySQL},
		RoundTrips: impls.RoundTrips{N: 2, Note: "conditional UPDATE (an INSERT IGNORE only for a key's first grant), conditioned release"},
		Footprint:  impls.Footprint{MySQLTable: "locklab_optimistic_lock", MySQLVersionIsToken: true},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/mysqllock/optimistic.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewOptimistic(context.Background(), cfg)
		},
	})
}

// optimisticTable is created by the first client. The version is never
// reset, not even on release, so every grant of a key gets a greater token
// than every grant before it. expires_at is set from the server's NOW(6):
// every client's lease is judged by one clock, never by its own.
const optimisticTable = `CREATE TABLE IF NOT EXISTS locklab_optimistic_lock (
	lock_key   VARBINARY(255) NOT NULL PRIMARY KEY,
	owner      VARCHAR(255) NULL,
	version    BIGINT UNSIGNED NOT NULL,
	expires_at DATETIME(6) NOT NULL
) ENGINE=InnoDB`

const (
	// optimisticGrant is the whole grant in one statement, a compare-and-
	// set under the row's lock: the row is taken only if it is free or its
	// lease ran out by the server's clock, and its version is bumped in the
	// same step. LAST_INSERT_ID(expr) hands the new version back in the
	// statement's own answer, so no second read can see a later grant's.
	// No row changed means the row is missing or held.
	optimisticGrant = `UPDATE locklab_optimistic_lock
SET owner = ?, version = LAST_INSERT_ID(version + 1), expires_at = NOW(6) + INTERVAL ? MICROSECOND
WHERE lock_key = ? AND (owner IS NULL OR expires_at <= NOW(6))`
	// optimisticCreate makes a missing row, free, at version 0; a row that
	// exists is left alone (held or not, the grant decides).
	optimisticCreate = `INSERT IGNORE INTO locklab_optimistic_lock (lock_key, owner, version, expires_at)
VALUES (?, NULL, 0, '1970-01-01')`
	// optimisticRefresh extends only our own live grant: an expired lease
	// stays expired even if nobody took the row since.
	optimisticRefresh = `UPDATE locklab_optimistic_lock SET expires_at = NOW(6) + INTERVAL ? MICROSECOND
WHERE lock_key = ? AND owner = ? AND version = ? AND expires_at > NOW(6)`
	// optimisticRelease frees our own live grant and keeps the version.
	optimisticRelease = `UPDATE locklab_optimistic_lock SET owner = NULL, expires_at = '1970-01-01'
WHERE lock_key = ? AND owner = ? AND version = ? AND expires_at > NOW(6)`
)

// Optimistic is the source documents' "乐观锁增加版本号" (an optimistic
// lock with a version number) made a lease: a grant is a compare-and-set
// that bumps the version, and the version doubles as the fencing token.
type Optimistic struct {
	s        *settings
	sessions *sessions
	owner    string
}

// NewOptimistic connects and creates the lock table if needed.
func NewOptimistic(ctx context.Context, cfg impls.Config) (*Optimistic, error) {
	s, err := newSettings(optimisticName, cfg)
	if err != nil {
		return nil, err
	}
	// Rows affected count the rows matched, not those changed: a refresh
	// in the same microsecond as the grant changes nothing and is still
	// ours.
	s.cfg.ClientFoundRows = true
	l := &Optimistic{s: s, sessions: newSessions(s), owner: cfg.ClientID}
	if err := ensureSchema(ctx, l.sessions, optimisticTable); err != nil {
		l.sessions.Close()
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
	for attempt := 0; ; attempt++ {
		var n, version int64
		err := l.sessions.exec(ctx, "acquire", func(ctx context.Context, c *sql.Conn) error {
			res, err := c.ExecContext(ctx, optimisticGrantSQL(), owner, l.s.ttl.Microseconds(), rowKey(key))
			if err == nil {
				n, err = res.RowsAffected()
			}
			if err == nil {
				version, err = res.LastInsertId()
			}
			return err
		})
		if err != nil {
			return nil, impls.Classify(ctx, optimisticName, "acquire", err, true)
		}
		if n == 1 {
			return &optimisticLease{l: l, key: key, owner: owner, version: version}, nil
		}
		if attempt > 0 {
			return nil, impls.Fail(optimisticName, "acquire", impls.ErrHeld, nil)
		}
		// Nothing granted: the row is held, or missing. Making it (if
		// missing) and asking once more tells the two apart.
		var created int64
		err = l.sessions.exec(ctx, "acquire", func(ctx context.Context, c *sql.Conn) error {
			res, err := c.ExecContext(ctx, optimisticCreate, rowKey(key))
			if err == nil {
				created, err = res.RowsAffected()
			}
			return err
		})
		if err != nil {
			return nil, impls.Classify(ctx, optimisticName, "acquire", err, false)
		}
		if created == 0 {
			return nil, impls.Fail(optimisticName, "acquire", impls.ErrHeld, nil)
		}
	}
}

// Close closes the sessions; leases stay in the table until they expire.
func (l *Optimistic) Close() error { return l.sessions.Close() }

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
	return s.update(ctx, "refresh", optimisticRefresh, s.l.s.ttl.Microseconds(), rowKey(s.key), s.owner, s.version)
}

func (s *optimisticLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(optimisticName, "release", impls.ErrNotHeld, nil)
	}
	err := s.update(ctx, "release", optimisticRelease, rowKey(s.key), s.owner, s.version)
	if err == nil || errors.Is(err, impls.ErrNotHeld) {
		s.released = true
	}
	return err
}

// update runs an owner-and-version-conditioned UPDATE; no row matched
// means the grant is no longer ours (expired, re-granted or released).
func (s *optimisticLease) update(ctx context.Context, op, query string, args ...any) error {
	var n int64
	err := s.l.sessions.exec(ctx, op, func(ctx context.Context, c *sql.Conn) error {
		res, err := c.ExecContext(ctx, query, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return impls.Classify(ctx, optimisticName, op, err, true)
	}
	if n == 0 {
		return impls.Fail(optimisticName, op, impls.ErrNotHeld, nil)
	}
	return nil
}
