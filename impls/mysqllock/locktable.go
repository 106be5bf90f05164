package mysqllock

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const lockTableName = "mysql-lock-table"

func init() {
	impls.Register(impls.Spec{
		Name: lockTableName,
		Summary: "the source documents' MySQL lock table: INSERT a row under a unique key (duplicate entry = held), " +
			"owner-checked DELETE to release; no expiry and no waiting at the database",
		Broken: "no expiry: a holder that crashes (or loses its DELETE) leaves its row, and every other client " +
			"gets ErrHeld forever, until someone deletes the row by hand",
		Caps:       impls.Capabilities{},
		Backend:    impls.Backend{Kind: topology.MySQL},
		RoundTrips: impls.RoundTrips{N: 2, Note: "INSERT, DELETE"},
		Footprint:  impls.Footprint{MySQLTable: "locklab_lock_table"},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/mysqllock/locktable.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewLockTable(context.Background(), cfg)
		},
	})
}

// lockTable holds one row per held lock. The key is binary, so the unique
// index compares bytes: under the default case-insensitive, space-padding
// collation 'Key' and 'key', or 'k' and 'k ', would be one lock.
// acquired_at is for people who find a stuck row; nothing reads it.
const lockTable = `CREATE TABLE IF NOT EXISTS locklab_lock_table (
	lock_key    VARBINARY(255) NOT NULL PRIMARY KEY,
	owner       VARCHAR(255) NOT NULL,
	acquired_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB`

// LockTable is the "基于 Mysql 锁表" of the source documents: the unique
// index is the whole lock. Their list of its faults holds: the row has no
// expiry, so a holder that dies without its DELETE keeps the lock until
// someone deletes the row by hand (the row is committed data: the server
// ending the dead client's session changes nothing); the INSERT fails at
// once instead of queueing, so waiters poll; it is not reentrant.
type LockTable struct {
	s        *settings
	sessions *sessions
	owner    string
}

// NewLockTable connects and creates the lock table if needed.
func NewLockTable(ctx context.Context, cfg impls.Config) (*LockTable, error) {
	s, err := newSettings(lockTableName, cfg)
	if err != nil {
		return nil, err
	}
	l := &LockTable{s: s, sessions: newSessions(s), owner: cfg.ClientID}
	if err := ensureSchema(ctx, l.sessions, lockTable); err != nil {
		l.sessions.Close()
		return nil, err
	}
	return l, nil
}

func (l *LockTable) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.try(ctx, key)
}

// Acquire polls: a failed INSERT queues nobody.
func (l *LockTable) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		lease, err := l.try(ctx, key)
		return lease, 0, err
	})
}

func (l *LockTable) try(ctx context.Context, key string) (impls.Lease, error) {
	owner, err := newOwner(l.owner)
	if err != nil {
		return nil, impls.Fail(lockTableName, "acquire", impls.ErrBackend, err)
	}
	err = l.sessions.exec(ctx, "acquire", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, "INSERT INTO locklab_lock_table (lock_key, owner) VALUES (?, ?)", rowKey(key), owner)
		return err
	})
	// A deadlock is contention too. INSERTs of a key whose row a DELETE
	// (a release) has locked wait for a shared lock on it; once the DELETE
	// commits, each holds that and needs an exclusive one, and InnoDB
	// rolls all but one back (1213). The victim's INSERT, autocommitted,
	// is rolled back whole, so it holds nothing, and another client's got
	// the key. The window is a commit's length, so a binary log widens it
	// and semi-synchronous replication most (the DELETE keeps its lock
	// until the replica acknowledges it): of 900 back-to-back tries of
	// three clients, 10 met a deadlock on one server, 39 on
	// mysql-replica-async, 118 to 144 on mysql-replica-semisync, where the
	// backend failures this was taken for failed the contention run.
	if mysqlCode(err, errDupEntry) || mysqlCode(err, errDeadlock) {
		return nil, impls.Fail(lockTableName, "acquire", impls.ErrHeld, err)
	}
	if err != nil {
		// An INSERT whose answer was lost may have committed, and with no
		// expiry that row would hold the key for good: the caller is told
		// the outcome is unknown, and nothing more can be done here.
		return nil, impls.Classify(ctx, lockTableName, "acquire", err, true)
	}
	return &lockTableLease{l: l, key: key, owner: owner}, nil
}

// Close closes the sessions. The rows of leases still held stay: that is
// the crash this lock cannot recover from.
func (l *LockTable) Close() error { return l.sessions.Close() }

type lockTableLease struct {
	l     *LockTable
	key   string
	owner string

	mu       sync.Mutex
	released bool
}

func (s *lockTableLease) Key() string           { return s.key }
func (s *lockTableLease) Token() (uint64, bool) { return 0, false }
func (s *lockTableLease) Lost() <-chan struct{} { return never }
func (s *lockTableLease) String() string        { return s.key + "@" + s.owner }

// Refresh has nothing to extend; it checks the row is still ours (someone
// may have deleted it by hand to clear a stuck lock).
func (s *lockTableLease) Refresh(ctx context.Context) error {
	var ours bool
	err := s.l.sessions.exec(ctx, "refresh", func(ctx context.Context, c *sql.Conn) error {
		return c.QueryRowContext(ctx,
			"SELECT EXISTS (SELECT 1 FROM locklab_lock_table WHERE lock_key = ? AND owner = ?)",
			rowKey(s.key), s.owner).Scan(&ours)
	})
	if err != nil {
		return impls.Classify(ctx, lockTableName, "refresh", err, false)
	}
	if !ours {
		return impls.Fail(lockTableName, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

// Release deletes the row only if it is still ours, so a client can never
// free another client's lock.
func (s *lockTableLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(lockTableName, "release", impls.ErrNotHeld, nil)
	}
	var n int64
	err := s.l.sessions.exec(ctx, "release", func(ctx context.Context, c *sql.Conn) error {
		res, err := c.ExecContext(ctx, "DELETE FROM locklab_lock_table WHERE lock_key = ? AND owner = ?", rowKey(s.key), s.owner)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return impls.Classify(ctx, lockTableName, "release", err, true)
	}
	s.released = true
	if n == 0 {
		return impls.Fail(lockTableName, "release", impls.ErrNotHeld, nil)
	}
	return nil
}
