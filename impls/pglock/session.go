package pglock

import (
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/impls"
)

// session is what a session-bound lease (the advisory lock, the row lock
// of an open transaction) keeps: the one connection whose session holds
// the lock, the mutex that serialises it between Refresh, Release and the
// watcher (a pgx.Conn runs one statement at a time), and the watcher that
// tells the holder when the session, and the lock with it, is gone.
type session struct {
	pool *connPool
	conn *pgx.Conn

	mu       sync.Mutex
	released bool
	lost     chan struct{}
	lostOnce sync.Once
	// watcher is the next check's timer (watch); a released session stops
	// it, s.mu held.
	watcher *time.Timer
}

func newSession(pool *connPool, c *pgx.Conn) session {
	return session{pool: pool, conn: c, lost: make(chan struct{})}
}

func (s *session) Lost() <-chan struct{} { return s.lost }

// watch asks alive, with s.mu held, every ttl/3 until release; the first
// false ends the session and tells the holder. The TTL here is only how
// soon the holder hears of it: the lock itself has none. Each check runs
// from a timer (impls.WatchEvery), not from a goroutine kept for the lease.
func (s *session) watch(ttl time.Duration, alive func() bool) {
	s.watcher = impls.WatchEvery(&s.mu, max(ttl/3, 10*time.Millisecond), func() bool {
		if s.released || s.isLost() {
			return false
		}
		if !alive() {
			s.loseLocked()
			return false
		}
		return true
	})
}

// releaseLocked marks the session released and stops its checks. s.mu
// must be held.
func (s *session) releaseLocked() {
	s.released = true
	if s.watcher != nil {
		s.watcher.Stop()
	}
}

// loseLocked ends the session (so the server surely frees the lock) and
// tells the holder. s.mu must be held.
func (s *session) loseLocked() {
	s.lostOnce.Do(func() {
		s.pool.discard(s.conn)
		close(s.lost)
	})
}

func (s *session) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}
