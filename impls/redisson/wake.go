package redisson

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// shortWait is the longest wait slept in the client rather than in a
// BLPOP: Redis times out a blocked client only on its clock tick (every
// 100 ms at the default hz), which would add up to a tick to the recovery
// from a holder that died, so a wait shorter than a tick is a timer here.
const shortWait = 100 * time.Millisecond

// replyMargin is how long before the context's deadline a BLPOP with an
// attempt behind it ends: Redis answers a timed-out BLPOP on its next clock
// tick, up to 100 ms late at the default hz. Closer to the deadline the
// wait is a timer (shortWait).
const replyMargin = 150 * time.Millisecond

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
// The woken waiter's next attempt is sent with its BLPOP, in one pipeline:
// Redis runs it the moment the BLPOP returns, before the releaser's next
// request can arrive, so a release hands the lock to the waiter blocked
// longest without a round trip of the waiter's in between, and the wait
// costs one round trip, not a BLPOP and then an attempt. (Sent after the
// reply, the attempt lost the race to the releaser taking the lock back
// three times in four, and its refusal sent the waiter back to block.)
//
// No release slips by unseen: a waiter blocks only after it saw the lock
// held (a refused attempt, or Acquire's look) or right after a release of
// its own pushed a token (Acquire), and a release that comes after that
// leaves its token on the list until someone pops it and tries the lock.
// The list never holds more than one token: a release cuts it back to one.
// A token left there while nobody was blocked wakes the next waiter to
// block into one refused attempt; deleting it at every grant cost a command
// on every grant, and a blocked waiter pops a token the moment it is pushed.
//
// A popped token is never given back: the attempt behind it runs whatever
// the waiter's process does next. It is refused only while somebody holds
// the lock, whose release pushes the next token; granted, it is this
// waiter's, and a waiter that no longer wants it (its context ended)
// releases it, which pushes the next token.
//
// A waiter frozen (SIGSTOP) while it blocks can be granted the lock while it
// cannot know: its pipeline is on the server already. Nothing renews that
// grant, so it frees itself a TTL later, as a frozen holder's does (the
// others wait that long, where a token lost to a frozen waiter held them up
// for maxBlock at most: the price of the round trip saved); and when
// the waiter wakes, it reads the grant late. The grant was made after the
// pipeline was sent, so its lease runs out a TTL after the sending at the
// earliest: a grant read within two thirds of a TTL of the sending is held
// (its watchdog is due before the last third), and one read later is
// trusted only once a renewal found it still ours.

// maxBlock bounds one BLPOP: go-redis cannot end a blocked read when a
// context without a deadline is cancelled, so a cancelled Acquire returns
// within this time.
func (l *Locker) maxBlock() time.Duration { return min(l.ttl/2, time.Second) }

// errFree is look's answer for a lock that is free.
var errFree = errors.New("free")

// look reads the holder's remaining lease, a plain PTTL in place of a
// refused attempt when the lock is most likely held (see Acquire). It
// returns errFree if the lock is free.
func (l *Locker) look(ctx context.Context, key string) (time.Duration, error) {
	if l.isClosing() {
		return 0, l.closedErr()
	}
	n, err := l.rdb.Do(ctx, "pttl", lockKey(key)).Int64()
	switch {
	case err != nil:
		// A read: nothing it did can have changed the lock.
		return 0, impls.Classify(ctx, l.name, "acquire", err, false)
	case n == -2:
		return 0, errFree
	}
	return time.Duration(n) * time.Millisecond, nil
}

// waitFor is how long a waiter blocks after it saw the lock held with pttl
// left: until the holder's lease runs out, at most maxBlock, and ending
// before the context's deadline.
func (l *Locker) waitFor(ctx context.Context, pttl time.Duration) time.Duration {
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
	return wait
}

// waitAndTry waits, after the lock was seen held with pttl left, for a
// release's token or for the holder's lease to run out, whichever comes
// first, and makes the next attempt: it returns that attempt's result (a
// refusal is ErrHeld, with the holder's remaining TTL), or why the wait
// ended without one (the context, Close).
func (l *Locker) waitAndTry(ctx context.Context, key string, pttl time.Duration) (impls.Lease, time.Duration, error) {
	held := impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	wait := l.waitFor(ctx, pttl)
	block := wait
	if dl, ok := ctx.Deadline(); ok {
		// The attempt behind the BLPOP may be granted: its reply must be
		// read, not thrown away with a connection timed out at the
		// deadline, which would leave a grant nobody holds for a TTL.
		block = min(block, time.Until(dl)-replyMargin)
	}
	if block < shortWait {
		if err := l.timer(ctx, max(wait, time.Millisecond)); err != nil {
			if l.isClosing() {
				return nil, 0, err
			}
			return nil, 0, impls.Fail(l.name, "acquire", err, held)
		}
		return l.try(ctx, key)
	}
	sent := time.Now()
	// The replies are read even when ctx ends first: the attempt behind the
	// BLPOP runs on the server whatever the caller does, and a reply thrown
	// away leaves a grant nobody holds for a TTL. The margin above is not
	// enough on a loaded machine: in container mode beside other tests, the
	// BLPOP's reply came past the deadline, and the next client found the
	// lock held by the waiter that had given up (the conformance test
	// BlockedAcquireEndsWithContextAndLeavesNothing). A grant read after
	// the caller gave up is released below, as Redisson's tryLock does.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), block+l.maxBlock())
	defer cancel()
	pipe := l.wait.Pipeline()
	pop := pipe.Do(rctx, "blpop", wakeKey(key), strconv.FormatFloat(block.Seconds(), 'f', 3, 64))
	// A waiter asks as one that does not hold the key: only a free lock is
	// granted here, so its grant (count 1) starts a new hold.
	attempt := acquireScriptNow().EvalSha(rctx, pipe, l.scriptKeys(key), l.acquireArgs(false)...)
	_, _ = pipe.Exec(rctx) // each command's error is read below
	res, aerr := attempt.Int64Slice()
	switch {
	case l.isClosing():
		// A grant that came with it is left to expire, as Close leaves
		// every hold.
		return nil, 0, l.closedErr()
	case aerr == nil:
	case impls.ContextErr(ctx) != nil:
		return nil, 0, impls.Fail(l.name, "acquire", impls.ContextErr(ctx), held)
	case redis.HasErrorPrefix(aerr, "NOSCRIPT"):
		// The server forgot the script (it restarted): the attempt on the
		// other client loads it again.
		return l.try(ctx, key)
	case pop.Err() != nil && !errors.Is(pop.Err(), redis.Nil):
		// The wait connection failed (the server may be down or cut off):
		// sleep the wait out here instead, so that the attempt that
		// follows, on the other client, reports what is wrong rather than
		// this loop spinning on a broken wait.
		if err := l.timer(ctx, block); err != nil {
			if l.isClosing() {
				return nil, 0, err
			}
			return nil, 0, impls.Fail(l.name, "acquire", err, held)
		}
		return l.try(ctx, key)
	}
	if aerr == nil && len(res) == 2 && res[0] > 0 && time.Since(sent) >= 2*l.ttl/3 {
		// Read late (see above): ours only if a renewal finds our field
		// still there, and then renewed from the renewal's sending.
		sent = time.Now()
		ok, err := l.renew(rctx, key)
		if err != nil {
			return nil, 0, impls.Classify(ctx, l.name, "acquire", err, true)
		}
		if !ok {
			return nil, 0, held
		}
	}
	l.grantMu.Lock()
	lease, next, err := l.result(ctx, key, res, aerr, sent)
	l.grantMu.Unlock()
	if cerr := impls.ContextErr(ctx); cerr != nil {
		if lease != nil {
			// Granted as the caller gave up: the release passes it on.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.maxBlock())
			_ = lease.Release(rctx)
			cancel()
		}
		return nil, 0, impls.Fail(l.name, "acquire", cerr, held)
	}
	return lease, next, err
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

func (l *Locker) isClosing() bool {
	select {
	case <-l.closing:
		return true
	default:
		return false
	}
}
