package mysqllock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const getLockName = "mysql-get-lock"

func init() {
	impls.Register(impls.Spec{
		Name: getLockName,
		Summary: "MySQL's named lock, GET_LOCK/RELEASE_LOCK, held by one dedicated session per lease; waiters wait " +
			"inside the server (GET_LOCK's own timeout, KILL QUERY when the caller gives up); no TTL: the server " +
			"frees it when the holder's session ends, and Lost() fires when a check finds the session gone or the lock not its own",
		Caps:       impls.Capabilities{LostNotify: true, NoPolling: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.MySQL},
		RoundTrips: impls.RoundTrips{N: 2, Note: "GET_LOCK, RELEASE_LOCK"},
		Footprint:  impls.Footprint{MySQLGetLock: true},
		Page:       "docs/lessons/10-database-locks.md",
		Source:     "impls/mysqllock/getlock.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return NewGetLock(context.Background(), cfg)
		},
	})
}

// GET_LOCK answers 1 (granted), 0 (its timeout ran out) or NULL (an error,
// or KILL QUERY ended the wait). IS_USED_LOCK answers the connection ID of
// the session holding the name, or NULL.
const (
	getLockSQL     = "SELECT GET_LOCK(?, ?)"
	releaseLockSQL = "SELECT RELEASE_LOCK(?)"
	heldByUsSQL    = "SELECT COALESCE(IS_USED_LOCK(?) = CONNECTION_ID(), 0)"
)

// foreverSeconds stands for "no timeout": MariaDB reads a negative GET_LOCK
// timeout as an error (NULL), where MySQL 5.7 reads it as infinite.
const foreverSeconds = 365 * 24 * 3600

// safeName is a key used as its lock name as it is. MariaDB compares names
// byte for byte, but cuts them at a NUL byte ('a\0b' and 'a\0c' were one
// lock when tried), and refuses names over 192 bytes; every other key is
// named by its digest.
var safeName = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,64}$`)

// lockName is the server-wide name GET_LOCK takes for key. Names are one
// namespace for the whole server, so the lab's are prefixed.
func lockName(key string) string {
	if safeName.MatchString(key) && !strings.HasPrefix(key, hashedPrefix) {
		return "locklab:" + key
	}
	return "locklab:" + digest(key)
}

// GetLock is MySQL's GET_LOCK. The lock belongs to the server session that
// took it, not to the client: RELEASE_LOCK on another session fails, and a
// session that ends, cleanly or not, frees its locks. Like PostgreSQL's
// advisory lock, it is reentrant within its session (MariaDB counts the
// grants), so a pool that handed a locked session to other code would give
// it our lock. Every lease here owns one session from grant to release,
// and only a session whose lock was released returns to the idle ones.
type GetLock struct {
	s        *settings
	sessions *sessions
}

// NewGetLock connects once, to fail early when the server is unreachable
// and to have a session ready for the first acquire.
func NewGetLock(ctx context.Context, cfg impls.Config) (*GetLock, error) {
	s, err := newSettings(getLockName, cfg)
	if err != nil {
		return nil, err
	}
	l := &GetLock{s: s, sessions: newSessions(s)}
	ss, err := l.sessions.get(ctx, "connect")
	if err != nil {
		l.sessions.Close()
		return nil, err
	}
	l.sessions.put(ss)
	return l, nil
}

// TryAcquire asks with a zero timeout: granted or held at once.
func (l *GetLock) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	ss, err := l.sessions.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	octx, cancel := l.s.withOp(ctx)
	var got sql.NullInt64
	err = ss.conn.QueryRowContext(octx, getLockSQL, lockName(key), 0).Scan(&got)
	cancel()
	if err != nil {
		// The lock may have been granted before the statement failed; a
		// session lock outlives a failed statement, and ending the session
		// is the one sure way to give it back.
		l.sessions.discard(ss)
		return nil, impls.Classify(ctx, getLockName, "acquire", err, true)
	}
	switch {
	case !got.Valid:
		l.sessions.discard(ss)
		return nil, impls.Fail(getLockName, "acquire", impls.ErrBackend, errors.New("GET_LOCK returned NULL"))
	case got.Int64 != 1:
		l.sessions.put(ss)
		return nil, impls.Fail(getLockName, "acquire", impls.ErrHeld, nil)
	}
	return l.newLease(ss, key), nil
}

// Acquire waits inside the server: MariaDB queues GET_LOCK's waiters and
// grants the name to one as soon as its holder releases it or its session
// ends, with no polling. GET_LOCK's own timeout is ctx's remaining time;
// a ctx cancelled before then is obeyed with KILL QUERY.
func (l *GetLock) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	ss, err := l.sessions.get(ctx, "acquire")
	if err != nil {
		return nil, err
	}
	for {
		timeout := float64(foreverSeconds)
		if dl, ok := ctx.Deadline(); ok {
			// The server's timeout ends the wait a little after ctx's, so
			// that ctx ends first and says which error the caller gets.
			timeout = max(time.Until(dl).Seconds(), 0) + 0.05
		}
		var got sql.NullInt64
		killed, err := l.sessions.wait(ctx, ss, []any{&got}, getLockSQL, lockName(key), getLockTimeout(timeout))
		granted := err == nil && getLockGranted(got)
		if ctxErr := impls.ContextErr(ctx); ctxErr != nil || killed {
			if ctxErr == nil {
				ctxErr = context.Canceled
			}
			return nil, l.abandon(ss, key, granted, ctxErr, err)
		}
		switch {
		case granted:
			return l.newLease(ss, key), nil
		case err != nil:
			l.sessions.discard(ss)
			return nil, impls.Classify(ctx, getLockName, "acquire", err, true)
		case !got.Valid:
			l.sessions.discard(ss)
			return nil, impls.Fail(getLockName, "acquire", impls.ErrBackend, errors.New("GET_LOCK returned NULL"))
		}
		// 0: the server's timeout ran out a moment before ctx's: wait again
		// for what is left.
	}
}

// abandon settles an acquire whose caller gave up. The wait's own answer
// says whether it was granted just before; a granted lock is released on
// the same session, and the session, which may still carry the KILL
// QUERY, is ended either way. The caller never holds the lock; only when
// the server could not be asked is it unknown whether the lock is still
// held by the dying session.
func (l *GetLock) abandon(ss *session, key string, granted bool, ctxErr, cause error) error {
	defer l.sessions.discard(ss)
	if cause != nil && !isServerError(cause) {
		return impls.Fail(getLockName, "acquire", impls.ErrUnknown, fmt.Errorf("%w: %w", ctxErr, cause))
	}
	if granted {
		octx, cancel := l.s.withOp(context.Background())
		var released sql.NullInt64
		err := ss.conn.QueryRowContext(octx, releaseLockSQL, lockName(key)).Scan(&released)
		cancel()
		if err != nil || !released.Valid || released.Int64 != 1 {
			// Ending the session frees it all the same, once the server
			// sees the connection gone.
			return impls.Fail(getLockName, "acquire", impls.ErrUnknown, fmt.Errorf("%w: release of a grant that came too late: %v", ctxErr, err))
		}
	}
	return impls.Fail(getLockName, "acquire", ctxErr, cause)
}

// Close ends every session, leases' included, without releasing: to the
// server it is a crash, and it frees the locks with the sessions.
func (l *GetLock) Close() error { return l.sessions.Close() }

type getLockLease struct {
	l   *GetLock
	key string
	ss  *session

	// mu serialises the session between Refresh, Release and the watcher:
	// a connection runs one statement at a time.
	mu       sync.Mutex
	released bool
	lost     chan struct{}
	lostOnce sync.Once
	// watcher times the next check (watch); Release stops it.
	watcher *time.Timer
}

func (l *GetLock) newLease(ss *session, key string) *getLockLease {
	s := &getLockLease{l: l, key: key, ss: ss, lost: make(chan struct{})}
	s.watch()
	return s
}

func (s *getLockLease) Key() string           { return s.key }
func (s *getLockLease) Token() (uint64, bool) { return 0, false }
func (s *getLockLease) Lost() <-chan struct{} { return s.lost }
func (s *getLockLease) String() string        { return s.key + "@get_lock" }

// watch asks the server every TTL/3 whether this session still holds the
// name: a failed question means the session is gone (server crash,
// connection cut, KILL, wait_timeout) or soon will be, and the lock with
// it. The TTL here only says how soon the holder hears; the lock has none.
func (s *getLockLease) watch() {
	s.watcher = impls.WatchEvery(&s.mu, max(s.l.s.ttl/3, 10*time.Millisecond), func() bool {
		if s.released || s.isLost() {
			return false
		}
		held, err := s.heldLocked(context.Background())
		if err != nil || !held {
			s.loseLocked()
			return false
		}
		return true
	})
}

func (s *getLockLease) heldLocked(ctx context.Context) (bool, error) {
	octx, cancel := s.l.s.withOp(ctx)
	defer cancel()
	var held int64
	err := s.ss.conn.QueryRowContext(octx, heldByUsSQL, lockName(s.key)).Scan(&held)
	return held == 1, err
}

// loseLocked ends the session (so the server surely frees the lock) and
// tells the holder. s.mu must be held.
func (s *getLockLease) loseLocked() {
	s.lostOnce.Do(func() {
		s.l.sessions.discard(s.ss)
		close(s.lost)
	})
}

func (s *getLockLease) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// Refresh has no TTL to extend; it asks the server whether this session
// still holds the name.
func (s *getLockLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released || s.isLost() {
		return impls.Fail(getLockName, "refresh", impls.ErrNotHeld, nil)
	}
	// The question runs under its own statement timeout, not ctx: the
	// driver ends a statement whose context ends by closing the
	// connection, and a refresh its caller gave up on would then end the
	// session, and the lock with it.
	held, err := s.heldLocked(context.Background())
	if err != nil {
		if !isServerError(err) {
			// The session is gone or in doubt; a session lock goes with it.
			s.loseLocked()
			return impls.Fail(getLockName, "refresh", impls.ErrNotHeld, err)
		}
		return impls.Classify(ctx, getLockName, "refresh", err, false)
	}
	if !held {
		s.loseLocked()
		return impls.Fail(getLockName, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

// Release runs RELEASE_LOCK on the lease's own session, the only one that
// can: 1 released, 0 held by another session, NULL held by none.
func (s *getLockLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(getLockName, "release", impls.ErrNotHeld, nil)
	}
	s.released = true
	s.watcher.Stop()
	if s.isLost() {
		return impls.Fail(getLockName, "release", impls.ErrNotHeld, nil)
	}
	if s.l.sessions.isClosed() {
		// The Locker's Close cut every session: the lock went with it.
		s.l.sessions.discard(s.ss)
		return impls.Fail(getLockName, "release", impls.ErrNotHeld, errors.New("the lease's session is closed"))
	}
	octx, cancel := s.l.s.withOp(ctx)
	var released sql.NullInt64
	err := s.ss.conn.QueryRowContext(octx, releaseLockSQL, lockName(s.key)).Scan(&released)
	cancel()
	if err != nil {
		// Ending the session frees the lock if the release did not; whether
		// it was still ours until then is unknown.
		s.l.sessions.discard(s.ss)
		return impls.Classify(ctx, getLockName, "release", err, true)
	}
	if !released.Valid || released.Int64 != 1 {
		s.l.sessions.discard(s.ss)
		return impls.Fail(getLockName, "release", impls.ErrNotHeld,
			fmt.Errorf("RELEASE_LOCK: this session did not hold %q", s.key))
	}
	// The session holds nothing now: it may serve the next acquire.
	s.l.sessions.put(s.ss)
	return nil
}
