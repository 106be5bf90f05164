package pglock

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const forUpdateName = "pg-for-update"

func init() {
	impls.Register(impls.Spec{
		Name: forUpdateName,
		Summary: "a row lock held by an open transaction: one row per key, locked with SELECT ... FOR UPDATE on a " +
			"dedicated connection and released by COMMIT; waiters wait in the server's row-lock queue (a cancel " +
			"request when the caller gives up); no TTL: the server rolls back, and so frees the row, when the " +
			"holder's session ends",
		Caps:    impls.Capabilities{LostNotify: true, NoPolling: true, Queued: true},
		Backend: impls.Backend{Kind: topology.Postgres},
		// CountedAs: PostgreSQL counts transactions, and the pair is one.
		RoundTrips: impls.RoundTrips{N: 2, Note: "BEGIN and SELECT ... FOR UPDATE sent together in one pipeline, COMMIT (one transaction; the key's row is inserted, INSERT ... ON CONFLICT DO NOTHING, only when the SELECT finds none)", CountedAs: 1},
		Footprint:  impls.Footprint{PGTable: "locklab_row_lock", PGRowLocked: true},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/pglock/forupdate.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewForUpdate(context.Background(), cfg)
		},
	})
}

// rowLockTable has one row per key ever locked; rows are never deleted, as
// a lock on a row needs the row.
const rowLockTable = `CREATE TABLE IF NOT EXISTS locklab_row_lock (
	key text PRIMARY KEY
)`

const (
	// ensureRow makes the key's row exist, outside the lock's transaction
	// (autocommitted). ON CONFLICT DO NOTHING does not lock the row it
	// meets, so it passes a held row without waiting for its holder.
	ensureRow = "INSERT INTO locklab_row_lock (key) VALUES ($1) ON CONFLICT (key) DO NOTHING"
	// tryRow skips the row if another transaction holds it: no row back
	// means held.
	tryRow  = "SELECT key FROM locklab_row_lock WHERE key = $1 FOR UPDATE SKIP LOCKED"
	waitRow = "SELECT key FROM locklab_row_lock WHERE key = $1 FOR UPDATE"
)

// inTransaction is the status byte of the server's ReadyForQuery while a
// transaction is open and sound ('I' idle, 'E' failed).
const inTransaction = 'T'

// ForUpdate is the transaction-held row lock (the source documents' "for
// update"), PostgreSQL's twin of mysql-for-update. The lock is the
// transaction's, so it belongs to one server session, as an advisory lock
// does, and ends with it: COMMIT or ROLLBACK release it, and so does the
// server when the session ends (a crashed client, a cut connection,
// idle_in_transaction_session_timeout, pg_terminate_backend), rolling the
// transaction back. Every lease owns its connection from grant to release.
type ForUpdate struct {
	s    *connSettings
	pool *connPool
}

// NewForUpdate connects and creates the row table if needed.
func NewForUpdate(ctx context.Context, cfg impls.Config) (*ForUpdate, error) {
	// cancelOnCtx: a blocked SELECT ... FOR UPDATE is ended by a cancel
	// request, which keeps the connection, so its ROLLBACK can settle
	// whether the row was granted just before.
	s, err := newSettings(forUpdateName, cfg, true)
	if err != nil {
		return nil, err
	}
	l := &ForUpdate{s: s, pool: newConnPool(s)}
	if err := ensureSchema(ctx, l.pool, 3, rowLockTable); err != nil {
		l.pool.Close()
		return nil, err
	}
	return l, nil
}

// exec runs one statement under the statement timeout.
func (l *ForUpdate) exec(ctx context.Context, c *pgx.Conn, sql string, args ...any) error {
	octx, cancel := l.s.withOp(ctx)
	defer cancel()
	_, err := c.Exec(octx, sql, args...)
	return err
}

// lockRow opens the lock's transaction and locks the key's row in it, in
// one round trip: BEGIN and the SELECT go in one pipeline, which the
// server runs in order before it answers either (a SELECT ... FOR UPDATE
// sent alone would run in a transaction of its own, and its row lock would
// end with it). found says the SELECT returned the row. On an error the
// transaction may be open or failed; the caller settles it with ROLLBACK.
// ctx bounds the whole pipeline: a wait in the row-lock queue ends with a
// cancel request when ctx ends, as a SELECT sent alone did.
func lockRow(ctx context.Context, c *pgx.Conn, query, key string) (found bool, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(query, key)
	br := c.SendBatch(ctx, b)
	if _, err = br.Exec(); err == nil {
		var got string
		err = br.QueryRow().Scan(&got)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// maxRowTries bounds how often an acquire makes a missing row and asks
// again: once is enough unless rows are deleted under it (the lock never
// deletes one; an operator might), and a broken table must end in an
// error, not a loop.
const maxRowTries = 3

// ensureKeyRow ends the lock's transaction, which found no row (missing,
// or held and skipped), and makes the key's row exist outside any
// transaction (autocommitted): only when a SELECT found none, so a key's
// first grant, not every grant, pays for it. inserted says the row was
// missing.
func (l *ForUpdate) ensureKeyRow(ctx context.Context, c *pgx.Conn, key string) (inserted bool, err error) {
	if err := l.rollback(c); err != nil {
		return false, err
	}
	octx, cancel := l.s.withOp(ctx)
	defer cancel()
	tag, err := c.Exec(octx, ensureRow, rowKey(key))
	return tag.RowsAffected() == 1, err
}

// rollback ends a transaction that locked nothing (the row was missing or
// held), keeping the connection for the next statement.
func (l *ForUpdate) rollback(c *pgx.Conn) error {
	return l.exec(context.Background(), c, "ROLLBACK")
}

// settle ends an acquire that did not grant: a ROLLBACK on the connection
// frees whatever its transaction may have locked, and the outcome is known
// (kind); when the connection cannot roll back, it is ended, which frees
// the row once the server sees it gone, and until then the outcome is
// unknown.
func (l *ForUpdate) settle(ctx context.Context, c *pgx.Conn, kind, cause error) error {
	if !c.IsClosed() && l.exec(context.Background(), c, "ROLLBACK") == nil {
		l.pool.put(c)
		if kind == nil {
			return impls.Classify(ctx, forUpdateName, "acquire", cause, false)
		}
		return impls.Fail(forUpdateName, "acquire", kind, cause)
	}
	l.pool.discard(c)
	return impls.Classify(ctx, forUpdateName, "acquire", cause, true)
}

func (l *ForUpdate) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	c, err := l.pool.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		octx, cancel := l.s.withOp(ctx)
		found, err := lockRow(octx, c, tryRow, rowKey(key))
		cancel()
		if err != nil {
			return nil, l.settle(ctx, c, nil, err)
		}
		if found {
			return l.newLease(c, key), nil
		}
		// No row back: the row is held (SKIP LOCKED passed it) or missing.
		// Making it tells the two apart: an INSERT ... ON CONFLICT DO
		// NOTHING passes a held row without waiting, and inserts only a
		// missing one, which is then free to ask for again.
		inserted, err := l.ensureKeyRow(ctx, c, key)
		if err != nil {
			return nil, l.settle(ctx, c, nil, err)
		}
		if !inserted || try >= maxRowTries {
			l.pool.put(c)
			return nil, impls.Fail(forUpdateName, "acquire", impls.ErrHeld, nil)
		}
	}
}

// Acquire waits in the server's row-lock queue, which grants the row to a
// waiter as soon as the holder's transaction ends: no polling. When ctx
// ends, pgx sends a cancel request that ends the wait.
func (l *ForUpdate) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	c, err := l.pool.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		found, err := lockRow(ctx, c, forUpdateWaitSQL(), rowKey(key))
		if err == nil && !found && skippedRowGrants() {
			found = true
		}
		if ctxErr := impls.ContextErr(ctx); ctxErr != nil {
			// Granted or not just before the cancel, the ROLLBACK frees it.
			return nil, l.settle(ctx, c, ctxErr, err)
		}
		if err != nil {
			return nil, l.settle(ctx, c, nil, err)
		}
		if found {
			return l.newLease(c, key), nil
		}
		// No row back from a SELECT that waits for a held row: the row is
		// missing. Make it, outside the lock's transaction, and ask again.
		if _, err := l.ensureKeyRow(ctx, c, key); err != nil {
			return nil, l.settle(ctx, c, nil, err)
		}
		if try >= maxRowTries {
			l.pool.put(c)
			return nil, impls.Fail(forUpdateName, "acquire", impls.ErrBackend,
				fmt.Errorf("the row of %q was missing %d times after it was made", key, try))
		}
	}
}

// Close ends every session without committing: the server rolls their
// transactions back and frees the rows, as after a crash.
func (l *ForUpdate) Close() error { return l.pool.Close() }

type forUpdateLease struct {
	session
	l   *ForUpdate
	key string
}

// newLease starts the watcher: it asks every TTL/3 whether the transaction
// is still open, and a failed question means the session is gone or in
// doubt, and with it the row lock.
func (l *ForUpdate) newLease(c *pgx.Conn, key string) *forUpdateLease {
	s := &forUpdateLease{session: newSession(l.pool, c), l: l, key: key}
	s.watch(l.s.ttl, func() bool {
		open, err := s.openLocked(context.Background())
		return err == nil && open
	})
	return s
}

func (s *forUpdateLease) Key() string           { return s.key }
func (s *forUpdateLease) Token() (uint64, bool) { return 0, false }
func (s *forUpdateLease) String() string        { return s.key + "@for-update" }

// openLocked makes one round trip (an empty statement) and reads the
// transaction status the server reports after it: the row lock lasts
// exactly as long as the transaction is open. s.mu must be held.
func (s *forUpdateLease) openLocked(ctx context.Context) (bool, error) {
	octx, cancel := s.l.s.withOp(ctx)
	defer cancel()
	if err := s.conn.Ping(octx); err != nil {
		return false, err
	}
	return s.conn.PgConn().TxStatus() == inTransaction, nil
}

// Refresh has no TTL to extend; it asks whether the transaction holding
// the row is still open.
func (s *forUpdateLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || s.isLost() {
		return impls.Fail(forUpdateName, "refresh", impls.ErrNotHeld, nil)
	}
	open, err := s.openLocked(ctx)
	if err != nil && !s.conn.IsClosed() && !sessionEnded(err) {
		// The connection lives (pgx cuts it when a statement's context
		// ends without an answer): a server error, the lock still ours.
		return impls.Classify(ctx, forUpdateName, "refresh", err, false)
	}
	if err != nil || !open {
		s.loseLocked()
		return impls.Fail(forUpdateName, "refresh", impls.ErrNotHeld, err)
	}
	return nil
}

// Release commits the lease's transaction, which frees the row. It first
// makes sure the transaction is still the one that locked the row: COMMIT
// with none open only warns, and would hide a lock lost before.
func (s *forUpdateLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, nil)
	}
	s.releaseLocked()
	if s.isLost() {
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, nil)
	}
	s.l.pool.mu.Lock()
	closed := s.l.pool.closed
	s.l.pool.mu.Unlock()
	if closed || s.conn.IsClosed() {
		// Closed before the COMMIT was sent: the session, and the row lock
		// with it, is gone; nothing is unknown.
		s.l.pool.discard(s.conn)
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, errors.New("the lease's session is closed"))
	}
	if s.conn.PgConn().TxStatus() != inTransaction {
		s.l.pool.discard(s.conn)
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld,
			fmt.Errorf("the lease's transaction had ended (status %q)", s.conn.PgConn().TxStatus()))
	}
	octx, cancel := s.l.s.withOp(ctx)
	_, err := s.conn.Exec(octx, "COMMIT")
	cancel()
	if sessionEnded(err) {
		// The server had ended the session (terminated, timed out) and
		// said so: it rolled the transaction back, and the row was no
		// longer ours.
		s.l.pool.discard(s.conn)
		return impls.Fail(forUpdateName, "release", impls.ErrNotHeld, err)
	}
	if err != nil {
		// Ending the session rolls back what the COMMIT did not end;
		// whether the row was still ours until then is unknown.
		s.l.pool.discard(s.conn)
		return impls.Classify(ctx, forUpdateName, "release", err, true)
	}
	s.l.pool.put(s.conn)
	return nil
}

// sessionEnded says err is the server's own FATAL report that it ended the
// session (pg_terminate_backend, an idle timeout): it rolled back first.
func sessionEnded(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Severity == "FATAL"
}
