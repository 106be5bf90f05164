package impls

import (
	"sync"
	"time"
)

// WatchEvery runs check, with mu held, every interval until check answers
// false; a session lock's lease (pglock, mysqllock) checks its session
// this way, and stops the returned timer, with mu held, when it is
// released. Each check runs from a timer rather than from a goroutine kept
// for the lease: an uncontended pair then starts no goroutine and wakes
// none when it releases (a goroutine per lease and its wake-up at release
// were a few percent of a pair's CPU).
func WatchEvery(mu *sync.Mutex, interval time.Duration, check func() bool) *time.Timer {
	mu.Lock()
	defer mu.Unlock()
	var t *time.Timer
	// The first check waits for mu, so it sees t assigned.
	t = time.AfterFunc(interval, func() {
		mu.Lock()
		defer mu.Unlock()
		if check() {
			t.Reset(interval)
		}
	})
	return t
}
