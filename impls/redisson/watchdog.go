package redisson

import (
	"context"
	"time"
)

// watch is the watchdog of one hold, started TTL/3 after the grant by the
// hold's start timer: from then on, every TTL/3 it extends the lock by a
// full TTL, so a live holder never sees its lease run out however long it
// works, while a crashed one (or a Locker closed without releasing) stops
// renewing and its lock frees itself one TTL later. It ends when the hold is
// released or the Locker closed (stop), or when it learns the lock is no
// longer ours; only the last closes Lost.
//
// lastOK is when the last successful renewal (or the grant) was SENT: the
// server's TTL started no earlier, so once a TTL has passed since then
// without another success, the lock has expired on the server for sure.
func (l *Locker) watch(h *hold, lastOK time.Time) {
	defer l.wg.Done()
	if watchdogOff() {
		return
	}
	every := l.ttl / 3
	t := time.NewTimer(0) // the first renewal is due now
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		sent := time.Now()
		ok, err := l.renewFor(h, every)
		select {
		case <-h.stop:
			// Released or closed while the renewal was in flight: a refusal
			// or error now may be our own release's doing, not a loss.
			return
		default:
		}
		switch {
		case err == nil && ok:
			lastOK = sent
		case err == nil:
			// Our owner field is gone: expired or deleted behind our back.
			l.lose(h)
			return
		case time.Since(lastOK) >= l.ttl:
			// Renewals kept failing (server unreachable) for a whole TTL.
			l.lose(h)
			return
		}
		// A failed renewal is retried at the next tick; two more fit in
		// before the lease can run out.
		t.Reset(every)
	}
}

// renewFor runs one renewal for the watchdog, bounded by timeout and cut
// short if the hold stops meanwhile.
func (l *Locker) renewFor(h *hold, timeout time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return l.renew(ctx, h.key)
}

// renew extends the lock by a TTL if our owner field is still in it.
func (l *Locker) renew(ctx context.Context, key string) (bool, error) {
	n, err := renewScriptNow().Run(ctx, l.rdb, []string{lockKey(key)}, l.ttl.Milliseconds(), l.owner).Int64()
	return n == 1, err
}
