package engine

import (
	"context"
	"time"
)

// queueSettle is how long a woken client is given to join the line: a
// tenth of the TTL, many times the one request that joining takes (a queue
// entry, a sequential node). Short, because the line must form and the
// holder release within its lease: redis-fair renews nothing, and with
// the 300ms this once was, twice, plus the half TTL before the release,
// the holder's lease (one TTL) had run out before it released, so the
// live waiter was granted the lock by the expiry, not by the release the
// scenario is about.
func queueSettle(env *Env) time.Duration { return env.TTL / 10 }

func settle(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
