package impls

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Backoff bounds the waits between polling attempts of a blocking Acquire.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff suits locks whose round trip is well under a millisecond.
var DefaultBackoff = Backoff{Min: time.Millisecond, Max: PollMaxWait}

// PollMaxWait is the longest a polling waiter sleeps between attempts.
const PollMaxWait = 32 * time.Millisecond

// Poll turns a TryAcquire into a blocking Acquire for locks that cannot wait
// on a notification: it retries while the lock is held by another client,
// sleeping an exponentially growing, fully jittered time (so that waiters
// do not retry in lockstep), and gives up when ctx ends. Any other error ends
// the wait at once. hint, when positive, caps the next wait (e.g. the lock's
// remaining TTL reported by the server).
func Poll(ctx context.Context, b Backoff, try func(ctx context.Context) (Lease, time.Duration, error)) (Lease, error) {
	wait := b.Min
	for {
		lease, hint, err := try(ctx)
		if err == nil {
			return lease, nil
		}
		if !errors.Is(err, ErrHeld) {
			return nil, err
		}
		sleep := time.Duration(rand.Int64N(int64(wait))) + 1
		if hint > 0 && sleep > hint {
			sleep = hint
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &Error{Op: "acquire", Kind: ctx.Err(), Err: err, Impl: implOf(err)}
		case <-t.C:
		}
		if wait *= 2; wait > b.Max {
			wait = b.Max
		}
	}
}

func implOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Impl
	}
	return "?"
}
