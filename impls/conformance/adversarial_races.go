package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
)

// adversarialRaces runs the races around a lease's end: a refresh or a
// release after the lease was lost, an acquire cancelled or its client
// closed while it waits, and a release against the expiry.
func adversarialRaces(t *testing.T, e *env) {
	ctx := context.Background()
	var footprint *redisFootprint
	if len(e.srv.redis) > 0 {
		f := e.srv.redisFootprint(t, e.newLocker(t), freshKey(t))
		footprint = &f
	}
	zkDir := func(key string) string {
		if e.srv.zk == nil {
			return ""
		}
		probe := freshKey(t)
		return strings.ReplaceAll(e.srv.zkLockDir(t, e.newLocker(t), probe), probe, key)
	}

	// The lock is taken from its holder behind its back; its Refresh must
	// not succeed, and above all must not bring the lock back.
	t.Run("RefreshAfterLoss", func(t *testing.T) {
		key := freshKey(t)
		dir := zkDir(key)
		lease := mustAcquire(t, e.newLocker(t), key)
		e.srv.steal(t, key, footprint, dir)
		var defect string
		if err := lease.Refresh(ctx); err == nil {
			defect = "Refresh of a lock deleted behind its holder's back succeeded"
		}
		l2, err := e.newLocker(t).TryAcquire(ctx, key)
		if err != nil {
			defect = strings.TrimPrefix(defect+"; ", "; ") + fmt.Sprintf("after a refresh of a lost lease, another client got %v: the refresh revived it", err)
		} else {
			mustRelease(t, l2)
		}
		e.judge(t, DefectRefreshAfterLoss, defect)
	})

	// The lock is taken from its holder behind its back and granted to
	// another client; the first holder's release must not free the new
	// holder's lock (an owner check that a watchdog or a renewal cannot
	// stand in for: the stale holder has not yet noticed).
	t.Run("StaleReleaseAfterLoss", func(t *testing.T) {
		key := freshKey(t)
		dir := zkDir(key)
		stale := mustAcquire(t, e.newLocker(t), key)
		e.srv.steal(t, key, footprint, dir)
		current := mustAcquire(t, e.newLocker(t), key)
		var defect string
		if err := stale.Release(ctx); err == nil {
			defect = "the stale holder's release succeeded"
		}
		if l3, err := e.newLocker(t).TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
			if err == nil {
				l3.Release(ctx)
			}
			defect = strings.TrimPrefix(defect+"; ", "; ") + fmt.Sprintf("after it a third client got %v while the new holder held the lock: two holders", err)
		}
		current.Release(ctx)
		e.judge(t, DefectStaleReleaseFrees, defect)
	})

	// A waiter whose context is cancelled mid-wait returns at once with the
	// cancellation and leaves nothing behind that would take or block the
	// lock later.
	t.Run("CancelDuringBlockingAcquire", func(t *testing.T) {
		key := freshKey(t)
		holder := mustAcquire(t, e.newLocker(t), key)
		wctx, cancel := context.WithCancel(ctx)
		got := make(chan error, 1)
		go func() {
			l, err := e.newLocker(t).Acquire(wctx, key)
			if err == nil {
				l.Release(ctx)
			}
			got <- err
		}()
		time.Sleep(e.o.TTL / 4)
		cancel()
		var defect string
		select {
		case err := <-got:
			if !errors.Is(err, context.Canceled) {
				defect = fmt.Sprintf("a cancelled Acquire returned %v, want context.Canceled", err)
			}
		case <-time.After(e.recoveryBound()):
			defect = fmt.Sprintf("a cancelled Acquire had not returned %v later", e.recoveryBound())
		}
		mustRelease(t, holder)
		if err := freeSoon(t, e, key); err != nil && defect == "" {
			defect = fmt.Sprintf("after the cancelled wait and the holder's release: %v", err)
		}
		e.judge(t, DefectCancelledAcquire, defect)
	})

	// Close with a lease held is a crash to the server: a lock with expiry
	// frees within the bound; the closed client's lease cannot be released.
	t.Run("CloseWithLeaseHeld", func(t *testing.T) {
		key := freshKey(t)
		a := e.newLocker(t)
		lease := mustAcquire(t, a, key)
		if err := a.Close(); err != nil {
			t.Logf("Close with a lease held: %v", err)
		}
		rerr := lease.Release(ctx)
		if !e.spec.Caps.Expiry {
			t.Logf("no expiry declared; after Close the release says %v", rerr)
			return
		}
		actx, cancel := context.WithTimeout(ctx, e.recoveryBound())
		defer cancel()
		l2, err := e.newLocker(t).Acquire(actx, key)
		if err != nil {
			t.Fatalf("a closed holder's lock was not free within %v: %v", e.recoveryBound(), err)
		}
		mustRelease(t, l2)
	})

	// Close while one of the client's Acquires waits: the wait ends, with an
	// error and no lease, well before its own context would end it.
	t.Run("CloseDuringBlockingAcquire", func(t *testing.T) {
		key := freshKey(t)
		holder := mustAcquire(t, e.newLocker(t), key)
		w := e.newLocker(t)
		wctx, cancel := context.WithTimeout(ctx, 2*e.recoveryBound())
		defer cancel()
		got := make(chan error, 1)
		go func() {
			l, err := w.Acquire(wctx, key)
			if err == nil {
				l.Release(ctx)
				err = errors.New("granted")
			}
			got <- err
		}()
		time.Sleep(e.o.TTL / 4)
		w.Close()
		closed := time.Now()
		var defect string
		select {
		case err := <-got:
			if err.Error() == "granted" || errors.Is(err, context.DeadlineExceeded) {
				defect = fmt.Sprintf("an Acquire on a closed client ended with %v", err)
			} else if d := time.Since(closed); d > e.o.TTL {
				// A poller notices at its next attempt; more than a TTL
				// is a wait that ignored the Close.
				defect = fmt.Sprintf("an Acquire on a closed client returned only %v after the Close", d.Round(time.Millisecond))
			}
		case <-time.After(e.recoveryBound()):
			defect = fmt.Sprintf("an Acquire still waited %v after its client was closed", e.recoveryBound())
		}
		// The holder's lease may have lapsed meanwhile: what matters is
		// that the closed client did not take the lock.
		if err := holder.Release(ctx); err != nil && !errors.Is(err, impls.ErrNotHeld) {
			t.Fatalf("release the holder: %v", err)
		}
		if err := freeSoon(t, e, key); err != nil && defect == "" {
			defect = fmt.Sprintf("after the closed client's wait and the holder's release: %v", err)
		}
		e.judge(t, DefectCloseDuringAcquire, defect)
	})

	if e.spec.Caps.Expiry && !e.spec.Caps.Renewal {
		// A release racing the expiry: whichever wins, the lock ends free and
		// the answer is one of the two.
		t.Run("ReleaseAgainstExpiry", func(t *testing.T) {
			for _, early := range []time.Duration{2 * time.Millisecond, -2 * time.Millisecond} {
				key := freshKey(t)
				lease := mustAcquire(t, e.newLocker(t), key)
				time.Sleep(e.o.TTL - early)
				if err := lease.Release(ctx); err != nil && !errors.Is(err, impls.ErrNotHeld) {
					t.Fatalf("release at the expiry: %v, want nil or ErrNotHeld", err)
				}
				l2, err := e.newLocker(t).TryAcquire(ctx, key)
				if err != nil {
					t.Fatalf("after a release at the expiry: %v", err)
				}
				mustRelease(t, l2)
			}
		})
	}
}

// freeSoon checks that key is free: at once, or, for a lock whose abandoned
// waits take their turn, within the bound.
func freeSoon(t *testing.T, e *env, key string) error {
	t.Helper()
	ctx := context.Background()
	var l impls.Lease
	var err error
	if e.o.AbandonedWaitTakesItsTurn {
		actx, cancel := context.WithTimeout(ctx, e.recoveryBound())
		l, err = e.newLocker(t).Acquire(actx, key)
		cancel()
	} else {
		l, err = e.newLocker(t).TryAcquire(ctx, key)
	}
	if err != nil {
		return err
	}
	return l.Release(ctx)
}
