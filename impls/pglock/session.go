package pglock

import (
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
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
	stop     chan struct{}
}

func newSession(pool *connPool, c *pgx.Conn) session {
	return session{pool: pool, conn: c, lost: make(chan struct{}), stop: make(chan struct{})}
}

func (s *session) Lost() <-chan struct{} { return s.lost }

// watch asks alive, with s.mu held, every ttl/3 until release; the first
// false ends the session and tells the holder. The TTL here is only how
// soon the holder hears of it: the lock itself has none.
func (s *session) watch(ttl time.Duration, alive func() bool) {
	t := time.NewTicker(max(ttl/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.released {
			s.mu.Unlock()
			return
		}
		if !alive() {
			s.loseLocked()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
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
