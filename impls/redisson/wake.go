package redisson

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// shortWait is the longest wait slept in the client rather than in a
// BLPOP: Redis times out a blocked client only on its clock tick (every
// 100 ms at the default hz), which would add up to a tick to the recovery
// from a holder that died, so a wait shorter than a tick is a timer here.
const shortWait = 100 * time.Millisecond

// Waking one waiter per release.
//
// Redisson publishes on the lock's channel when the lock is freed, and every
// process waiting on it wakes and runs the acquire script; all but one are
// refused. With n waiting clients that is n attempts per release, and under
// contention most of them lose to the releaser taking the lock back: the
// bench counted 30.5 Redis commands per contended acquisition this way,
// against 5.2 for a polling lock. Here the last release pushes one token on
// the key's wake list and the waiters block on it in BLPOP, which Redis
// serves oldest first, so one release wakes one waiter.
//
// No release slips by unseen: a waiter blocks only after an attempt that
// was refused, and a release that comes after that refusal leaves its token
// on the list until someone pops it. The list never holds more than one
// token: a release cuts it back to one. A token left there while nobody was
// blocked (the releaser took the lock back first) wakes the next waiter to
// block into one refused attempt; deleting it at every grant cost a command
// on every grant, and a blocked waiter pops a token the moment it is pushed.
// A token popped by a waiter that cannot use it (its context ended, or it
// was frozen by SIGSTOP) is lost to the others, who then wait out the
// refusal's PTTL, at most maxBlock, before they try again: the same bound a
// lost pub/sub message had, and what keeps the wait from being a poll.

// maxBlock bounds one BLPOP: go-redis cannot end a blocked read when a
// context without a deadline is cancelled, so a cancelled Acquire returns
// within this time, and a token lost to a waiter that could not use it
// delays the others by no more than this.
func (l *Locker) maxBlock() time.Duration { return min(l.ttl/2, time.Second) }

// giveBackScript puts back a token popped by a waiter that will not try
// again (its context ended, or its Locker closed), but only while the lock
// is free: a token beside a held lock would only wake someone to be refused.
//
// KEYS: lock hash, wake list. ARGV: ttl ms.
var giveBackScript = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('rpush', KEYS[2], '1')
  redis.call('pexpire', KEYS[2], ARGV[1])
end
return 0
`)

// sleep waits, after a refused attempt, for a release's token or for the
// holder's remaining lease (pttl, as the refusal reported it) to run out,
// whichever comes first. It returns nil when the caller should try again.
func (l *Locker) sleep(ctx context.Context, key string, pttl time.Duration) error {
	switch {
	case pttl < 0:
		// PTTL -1: the key has no expiry (not set by us); wait one TTL.
		pttl = l.ttl
	case pttl < time.Millisecond:
		// PTTL 0: under a millisecond left; retry just after it.
		pttl = time.Millisecond
	}
	wait := min(pttl, l.maxBlock())
	if dl, ok := ctx.Deadline(); ok {
		// A BLPOP still blocked when the context's deadline passes fails
		// with a read timeout and its connection is thrown away: end the
		// wait a little before, and let the next attempt see the deadline.
		wait = min(wait, time.Until(dl)-shortWait/5)
	}
	if wait < shortWait {
		return l.timer(ctx, max(wait, time.Millisecond))
	}
	err := l.wait.Do(ctx, "blpop", wakeKey(key), strconv.FormatFloat(wait.Seconds(), 'f', 3, 64)).Err()
	switch {
	case l.isClosing():
		if err == nil {
			l.giveBack(key)
		}
		return l.closedErr()
	case ctx.Err() != nil:
		if err == nil {
			l.giveBack(key)
		}
		return ctx.Err()
	case err == nil || errors.Is(err, redis.Nil):
		// Woken by a release, or the wait ran out: try again.
		return nil
	default:
		// The wait connection failed (the server may be down or cut off):
		// sleep the wait out here instead, so that the attempt that follows,
		// on the other client, reports what is wrong rather than this
		// loop spinning on a broken wait.
		return l.timer(ctx, wait)
	}
}

// timer sleeps d unless the context ends or the Locker closes first.
func (l *Locker) timer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.closing:
		return l.closedErr()
	}
}

// giveBack returns a token this Locker popped but will not use.
func (l *Locker) giveBack(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.maxBlock())
	defer cancel()
	// Best effort: a token lost here delays the other waiters by at most
	// maxBlock, as any lost token does.
	_ = giveBackScript.Run(ctx, l.rdb, []string{lockKey(key), wakeKey(key)}, l.ttl.Milliseconds()).Err()
}

func (l *Locker) isClosing() bool {
	select {
	case <-l.closing:
		return true
	default:
		return false
	}
}
