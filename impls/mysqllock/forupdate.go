package mysqllock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const forUpdateName = "mysql-for-update"

func init() {
	impls.Register(impls.Spec{
		Name: forUpdateName,
		Summary: "a row lock held by an open transaction: one row per key, locked with SELECT ... FOR UPDATE on a " +
			"dedicated session and released by COMMIT; waiters wait in InnoDB's lock queue (KILL QUERY when the caller " +
			"gives up); no TTL: the server rolls back, and so frees the row, when the holder's session ends",
		Caps:    impls.Capabilities{LostNotify: true, NoPolling: true, Queued: true},
		Backend: impls.Backend{Kind: topology.MySQL},
		// CountedAs: the server's Questions counts the statements of a
		// multi-statement request one by one.
		RoundTrips: impls.RoundTrips{N: 2, Note: "START TRANSACTION and SELECT ... FOR UPDATE in one request, SELECT @@in_transaction and COMMIT in one (multi-statement requests; the key's row is inserted, INSERT IGNORE, only when the SELECT finds none)", CountedAs: 4},
		Footprint:  impls.Footprint{MySQLTable: "locklab_row_lock"},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/mysqllock/forupdate.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewForUpdate(context.Background(), cfg)
		},
	})
}

// rowLockTable has one row per key ever locked; rows are never deleted, as
// a lock on a row needs the row. The key is binary so that the index
// compares bytes (see lockTable).
const rowLockTable = `CREATE TABLE IF NOT EXISTS locklab_row_lock (
	lock_key VARBINARY(255) NOT NULL PRIMARY KEY
) ENGINE=InnoDB`

const (
	// ensureRowSQL makes the key's row exist, outside the lock's
	// transaction (autocommitted). An INSERT that meets a duplicate takes
	// a shared lock on it, so against a held row it would wait for the
	// holder: with no lock wait allowed it fails at once instead
	// (ER_LOCK_WAIT_TIMEOUT), which says the row exists and is locked.
	ensureRowSQL = "SET STATEMENT innodb_lock_wait_timeout = 0 FOR INSERT IGNORE INTO locklab_row_lock (lock_key) VALUES (?)"
	// tryRowSQL skips the row if another transaction holds it: no row back
	// means held.
	tryRowSQL  = "SELECT lock_key FROM locklab_row_lock WHERE lock_key = ? FOR UPDATE SKIP LOCKED"
	waitRowSQL = "SELECT lock_key FROM locklab_row_lock WHERE lock_key = ? FOR UPDATE"
	// inTrxSQL says whether the session's transaction is still open: the
	// row lock lasts exactly as long.
	inTrxSQL = "SELECT @@in_transaction"
	// beginAnd opens the lock's transaction in the same request as the
	// statement that locks the row: the server runs a multi-statement
	// request's statements in order, and stops at the first that fails.
	beginAnd = "START TRANSACTION; "
	// commitIfOpenSQL releases in one request: it reads whether the
	// transaction is still open and commits it. When it had ended (the
	// lock with it), the COMMIT finds no transaction and does nothing.
	commitIfOpenSQL = inTrxSQL + "; COMMIT"
)

// maxRowTries bounds how often an acquire makes a missing row and asks
// again: once is enough unless rows are deleted under it (the lock never
// deletes one; an operator might), and a broken table must end in an
// error, not a loop.
const maxRowTries = 3

// ForUpdate is the lock the source documents reach for with "for update": a
// row locked by an open transaction. The lock is the transaction's, so it
// belongs to one server session the way GET_LOCK does, and ends with it:
// COMMIT or ROLLBACK release it, and so does the server when the session
// ends (a crashed client, a cut connection, wait_timeout, KILL), rolling
// the transaction back. Every lease owns its session from grant to
// release.
type ForUpdate struct {
	s        *settings
	sessions *sessions
}

// NewForUpdate connects and creates the row table if needed.
func NewForUpdate(ctx context.Context, cfg impls.Config) (*ForUpdate, error) {
	s, err := newSettings(forUpdateName, cfg)
	if err != nil {
		return nil, err
	}
	// Two statements in one request, so that a pair costs two round trips
	// (START TRANSACTION with the SELECT, the check with the COMMIT), not
	// four. A value is still written into a statement only escaped by the
	// driver (InterpolateParams), so no key can add a statement of its own.
	s.cfg.MultiStatements = true
	// READ COMMITTED: a SELECT ... FOR UPDATE that finds no row then takes
	// no gap lock. Under REPEATABLE READ it does, and clients asking at once
	// for a new key, each having found no row, failed each other's INSERT
	// of it (the INSERT may not wait, ensureRowSQL) until they gave up. On
	// an existing row the two levels lock alike: the row, until COMMIT.
	s.sessionInit = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
	l := &ForUpdate{s: s, sessions: newSessions(s)}
	if err := ensureSchema(ctx, l.sessions, rowLockTable); err != nil {
		l.sessions.Close()
		return nil, err
	}
	return l, nil
}

// step runs one statement of an acquire on ss under the statement timeout.
func (l *ForUpdate) step(ctx context.Context, ss *session, query string, args ...any) error {
	octx, cancel := l.s.withOp(ctx)
	defer cancel()
	_, err := ss.conn.ExecContext(octx, query, args...)
	return err
}

// ensureKeyRow makes the key's row exist, outside the lock's transaction
// (autocommitted): only when a SELECT found none, so a key's first grant,
// not every grant, pays for it. inserted says the row was missing; locked
// says the row exists and another transaction holds it.
func (l *ForUpdate) ensureKeyRow(ctx context.Context, ss *session, key string) (inserted, locked bool, err error) {
	octx, cancel := l.s.withOp(ctx)
	defer cancel()
	res, err := ss.conn.ExecContext(octx, ensureRowSQL, rowKey(key))
	if mysqlCode(err, errLockWaitTimeout) {
		return false, true, nil
	}
	if err != nil {
		return false, false, err
	}
	n, err := res.RowsAffected()
	return n == 1, false, err
}

// lockRow sends START TRANSACTION and query (a SELECT ... FOR UPDATE of the
// key's row) in one request and reads both answers: found says the SELECT
// returned the row, which the open transaction then holds. run is how the
// request is sent (ended by KILL QUERY, sessions.waitFor, or bounded by a
// statement timeout).
func lockRow(ctx context.Context, ss *session, query, key string) (found bool, err error) {
	rows, err := ss.conn.QueryContext(ctx, beginAnd+query, key)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	// START TRANSACTION answers no rows; the SELECT's answer follows.
	for {
		for rows.Next() {
			var got []byte
			if err := rows.Scan(&got); err != nil {
				return false, err
			}
			found = true
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return found, rows.Close()
}

// fail ends an acquire that went wrong on ss. A server error leaves the
// session sound: its transaction is rolled back (freeing anything it
// locked) and it is kept. Anything else ends the session, which rolls the
// transaction back once the server sees it gone; until then a lock may
// have been granted, so the outcome is unknown.
func (l *ForUpdate) fail(ctx context.Context, ss *session, err error) error {
	if isServerError(err) && l.step(context.Background(), ss, "ROLLBACK") == nil {
		l.sessions.put(ss)
		return impls.Classify(ctx, forUpdateName, "acquire", err, false)
	}
	l.sessions.discard(ss)
	return impls.Classify(ctx, forUpdateName, "acquire", err, true)
}

func (l *ForUpdate) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	ss, err := l.sessions.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		octx, cancel := l.s.withOp(ctx)
		found, err := lockRow(octx, ss, tryRowSQL, rowKey(key))
		cancel()
		if err != nil {
			return nil, l.fail(ctx, ss, err)
		}
		if found {
			return l.newLease(ss, key), nil
		}
		// No row back: the row is held (SKIP LOCKED passed it) or missing.
		// Making it tells the two apart: the INSERT fails at once on a held
		// row, and inserts a missing one, which is then free to ask for.
		if err := l.step(ctx, ss, "ROLLBACK"); err != nil {
			return nil, l.fail(ctx, ss, err)
		}
		inserted, locked, err := l.ensureKeyRow(ctx, ss, key)
		if err != nil {
			return nil, l.fail(ctx, ss, err)
		}
		if locked || !inserted && try >= maxRowTries {
			l.sessions.put(ss)
			return nil, impls.Fail(forUpdateName, "acquire", impls.ErrHeld, nil)
		}
	}
}

// Acquire waits in InnoDB's lock queue, which grants the row to a waiter
// as soon as the holder's transaction ends. A wait longer than
// innodb_lock_wait_timeout (50s) fails and is made again; a ctx that ends
// first is obeyed with KILL QUERY.
func (l *ForUpdate) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	ss, err := l.sessions.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	for try := 1; ; {
		var found bool
		killed, err := l.sessions.waitFor(ctx, ss, func() (err error) {
			found, err = lockRow(context.Background(), ss, forUpdateWaitSQL(), rowKey(key))
			return err
		})
		if err == nil && !found && skippedRowGrants() {
			found = true
		}
		if ctxErr := impls.ContextErr(ctx); ctxErr != nil || killed {
			if ctxErr == nil {
				ctxErr = context.Canceled
			}
			return nil, l.abandon(ss, ctxErr, err)
		}
		switch {
		case err == nil && found:
			return l.newLease(ss, key), nil
		case err == nil:
			// No row back from a SELECT that waits for a held row: the row
			// is missing. Make it, outside the lock's transaction, and ask
			// again.
			if err := l.step(ctx, ss, "ROLLBACK"); err != nil {
				return nil, l.fail(ctx, ss, err)
			}
			_, locked, err := l.ensureKeyRow(ctx, ss, key)
			if err != nil {
				return nil, l.fail(ctx, ss, err)
			}
			if locked {
				// The row exists and another transaction holds it: the
				// next SELECT waits for it.
				continue
			}
			if try++; try > maxRowTries {
				l.sessions.put(ss)
				return nil, impls.Fail(forUpdateName, "acquire", impls.ErrBackend,
					fmt.Errorf("the row of %q was missing %d times after it was made", key, maxRowTries))
			}
			continue
		case mysqlCode(err, errLockWaitTimeout):
			// Only the statement was rolled back: the transaction is open,
			// and holds nothing yet. Wait again (the next START TRANSACTION
			// commits the empty one first).
			continue
		}
		return nil, l.fail(ctx, ss, err)
	}
}

// abandon settles an acquire whose caller gave up: whether the row was
// granted just before or not, ROLLBACK frees it, and the session, which
// may still carry the KILL QUERY, is ended. Only when the server could not
// be reached is it unknown whether the dying session still holds the row.
func (l *ForUpdate) abandon(ss *session, ctxErr, cause error) error {
	defer l.sessions.discard(ss)
	if cause != nil && !isServerError(cause) {
		return impls.Fail(forUpdateName, "acquire", impls.ErrUnknown, fmt.Errorf("%w: %w", ctxErr, cause))
	}
	if err := l.step(context.Background(), ss, "ROLLBACK"); err != nil {
		return impls.Fail(forUpdateName, "acquire", impls.ErrUnknown, fmt.Errorf("%w: rollback of an abandoned wait: %w", ctxErr, err))
	}
	return impls.Fail(forUpdateName, "acquire", ctxErr, cause)
}

// Close ends every session without committing: the server rolls their
// transactions back and frees the rows, as after a crash.
func (l *ForUpdate) Close() error { return l.sessions.Close() }

type forUpdateLease struct {
	l   *ForUpdate
	key string
	ss  *session

	mu       sync.Mutex
	released bool
	lost     chan struct{}
	lostOnce sync.Once
	// watcher times the next check (watch); Release stops it.
	watcher *time.Timer
}

func (l *ForUpdate) newLease(ss *session, key string) *forUpdateLease {
	s := &forUpdateLease{l: l, key: key, ss: ss, lost: make(chan struct{})}
	s.watch()
	return s
}

func (s *forUpdateLease) Key() string           { return s.key }
func (s *forUpdateLease) Token() (uint64, bool) { return 0, false }
func (s *forUpdateLease) Lost() <-chan struct{} { return s.lost }
func (s *forUpdateLease) String() string        { return s.key + "@for-update" }

// watch asks every TTL/3 whether the transaction is still open: a failed
// question means the session is gone or in doubt, and with it the row lock.
func (s *forUpdateLease) watch() {
	s.watcher = impls.WatchEvery(&s.mu, max(s.l.s.ttl/3, 10*time.Millisecond), func() bool {
		if s.released || s.isLost() {
			return false
		}
		open, err := s.openLocked(context.Background())
		if err != nil || !open {
			s.loseLocked()
			return false
		}
		return true
	})
}

// commitIfOpen reads whether the lease's transaction is still open and
// commits it, in one request (commitIfOpenSQL): open says it was, and the
// COMMIT then ended it; when it was not, the COMMIT found nothing to end.
// s.mu must be held.
func (s *forUpdateLease) commitIfOpen(ctx context.Context) (open bool, err error) {
	octx, cancel := s.l.s.withOp(ctx)
	defer cancel()
	rows, err := s.ss.conn.QueryContext(octx, commitIfOpenSQL)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var inTrx int64
	seen := false
	for rows.Next() {
		if err := rows.Scan(&inTrx); err != nil {
			return false, err
		}
		seen = true
	}
	// The COMMIT's answer: no rows, and its error if it failed.
	for rows.NextResultSet() {
		for rows.Next() {
		}
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	if err := rows.Close(); err != nil {
		return false, err
	}
	if !seen {
		return false, errors.New("SELECT @@in_transaction answered no row")
	}
	return inTrx == 1, nil
}

func (s *forUpdateLease) openLocked(ctx context.Context) (bool, error) {
	octx, cancel := s.l.s.withOp(ctx)
	defer cancel()
	var open int64
	err := s.ss.conn.QueryRowContext(octx, inTrxSQL).Scan(&open)
	return open == 1, err
}

// loseLocked ends the session (so the server surely rolls back) and tells
// the holder. s.mu must be held.
func (s *forUpdateLease) loseLocked() {
	s.lostOnce.Do(func() {
		s.l.sessions.discard(s.ss)
		close(s.lost)
	})
}

func (s *forUpdateLease) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// Refresh has no TTL to extend; it asks whether the transaction holding
// the row is still open.
func (s *forUpdateLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || s.isLost() {
		return impls.Fail(forUpdateName, "refresh", impls.ErrNotHeld, nil)
	}
	// Under its own statement timeout, not ctx: the driver ends a
	// statement whose context ends by closing the connection, which would
	// roll the lease's transaction back.
	open, err := s.openLocked(context.Background())
	if err != nil && isServerError(err) {
		return impls.Classify(ctx, forUpdateName, "refresh", err, false)
	}
	if err != nil || !open {
		s.loseLocked()
		return impls.Fail(forUpdateName, "refresh", impls.ErrNotHeld, err)
	}
	return nil
}

// Release commits the lease's transaction, which frees the row. It first
// makes sure the transaction is still the one that locked the row: a
// COMMIT with none open succeeds and would hide a lock lost before.
func (s *forUpdateLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, nil)
	}
	s.released = true
	s.watcher.Stop()
	if s.isLost() {
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, nil)
	}
	if s.l.sessions.isClosed() {
		s.l.sessions.discard(s.ss)
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, errors.New("the lease's session is closed"))
	}
	open, err := s.commitIfOpen(ctx)
	if err == nil && !open {
		s.l.sessions.discard(s.ss)
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, errors.New("the lease's transaction had ended"))
	}
	if err != nil {
		// Ending the session rolls back what the COMMIT did not end;
		// whether the row was still ours until then is unknown.
		s.l.sessions.discard(s.ss)
		return impls.Classify(ctx, forUpdateName, "release", err, true)
	}
	s.l.sessions.put(s.ss)
	return nil
}
