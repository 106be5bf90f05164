package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/topology"
)

// The broken variants pass the whole suite, contention included: they only
// break under the faults their sources describe. The two whose release is
// a plain DEL fail the owner check by design (ForeignRelease);
// redis-get-del-release passes it, because a release that comes after
// another client acquired sees that client's token in its GET.
func TestBrokenConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"redis-setnx-expire", conformance.Options{}},
		{"redis-getset", conformance.Options{ForeignRelease: true, KnownDefects: map[string]string{
			conformance.DefectStaleReleaseFrees: "release is a plain DEL (the lesson)"}}},
		// 003's variant: the check of its own expiry stops a release after
		// the holder's lease passed, but not one after it lost the lock
		// while its own clock said it still held it.
		{"redis-getset-own-expiry", conformance.Options{KnownDefects: map[string]string{
			conformance.DefectStaleReleaseFrees: "the own-expiry check reads the holder's clock, not the key: a lock lost before its time is still DELeted"}}},
		{"redis-del-release", conformance.Options{ForeignRelease: true, KnownDefects: map[string]string{
			conformance.DefectStaleReleaseFrees: "release is a plain DEL (the lesson)",
			conformance.DefectTokensGoBack:      conformance.CounterResetLimitation[conformance.DefectTokensGoBack]}}},
		{"redis-get-del-release", conformance.Options{KnownDefects: conformance.CounterResetLimitation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conformance.SideBySide(t)
			spec := lookup(t, tt.name)
			if spec.Broken == "" {
				t.Errorf("%s is registered without its flaw (Spec.Broken)", tt.name)
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), tt.opts)
		})
	}
}

// A client that dies between SETNX and PEXPIRE leaves a key with no expiry:
// the lock is never granted again, however long the others wait.
func TestSetNXExpireCrashAfterSetNXLeavesLockForever(t *testing.T) {
	const ttl = 500 * time.Millisecond
	addr, raw := startRedis(t)
	ctx := context.Background()
	key := testKey(t)

	reached, hang := make(chan struct{}), make(chan struct{})
	// Cleanups run last-in first-out: the crashed client's connections are
	// closed before its goroutine is let go, so it can never send PEXPIRE.
	t.Cleanup(func() { close(hang) })
	crashed := newLocker(t, "redis-setnx-expire", impls.Config{
		Servers: topology.At(topology.Redis, addr), TTL: ttl,
		Failpoint: func(name string) {
			if name == failpoint.AfterSetNX {
				close(reached)
				<-hang // the client is dead from here on
			}
		},
	})
	go crashed.TryAcquire(ctx, key)
	waitFor(t, reached, "the crashed client to reach "+failpoint.AfterSetNX)

	if pttl := pttl(t, raw, key); pttl != -1 {
		t.Fatalf("PTTL after SETNX alone = %d, want -1 (a key with no expiry)", pttl)
	}
	other := newLocker(t, "redis-setnx-expire", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})
	actx, cancel := context.WithTimeout(ctx, 2*ttl)
	defer cancel()
	for {
		_, err := other.Acquire(actx, key)
		if errors.Is(err, context.DeadlineExceeded) {
			break // waited 2×TTL without a grant: the deadlock
		}
		// A reply slower than the client's timeout on a loaded machine is
		// an unknown outcome, not a grant: keep waiting.
		if errors.Is(err, impls.ErrUnknown) && actx.Err() == nil {
			continue
		}
		t.Fatalf("Acquire for 2×TTL after the crash: %v, want context.DeadlineExceeded (deadlock)", err)
	}
	if _, err := other.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
		t.Fatalf("TryAcquire 2×TTL after the crash: %v, want ErrHeld", err)
	}
	if pttl := pttl(t, raw, key); pttl != -1 {
		t.Fatalf("PTTL 2×TTL after the crash = %d, want -1 still", pttl)
	}
}

// Without the crash the same client sets the expiry, so the lock frees
// itself: the deadlock above is the failpoint's doing, not a bug elsewhere.
func TestSetNXExpireWithoutCrashExpires(t *testing.T) {
	const ttl = 500 * time.Millisecond
	addr, raw := startRedis(t)
	ctx := context.Background()
	key := testKey(t)
	a := newLocker(t, "redis-setnx-expire", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})
	if _, err := a.TryAcquire(ctx, key); err != nil {
		t.Fatal(err)
	}
	if p := pttl(t, raw, key); p <= 0 || p > ttl.Milliseconds() {
		t.Fatalf("PTTL after acquire = %d, want in (0, %d]", p, ttl.Milliseconds())
	}
}

// The GET says the lock is ours; before the DEL the lease runs out and
// another client takes the lock; the DEL then deletes that client's lock
// and a third client gets in beside it.
func TestGetDelReleaseDeletesTheNextHoldersLock(t *testing.T) {
	const ttl = 500 * time.Millisecond
	addr, _ := startRedis(t)
	ctx := context.Background()
	key := testKey(t)

	reached, proceed := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	stale := newLocker(t, "redis-get-del-release", impls.Config{
		Servers: topology.At(topology.Redis, addr), TTL: ttl,
		Failpoint: func(name string) {
			if name == failpoint.BetweenGetAndDel && once.CompareAndSwap(false, true) {
				close(reached)
				<-proceed // a pause: GC, scheduler, slow network
			}
		},
	})
	b := newLocker(t, "redis-get-del-release", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})
	c := newLocker(t, "redis-get-del-release", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})

	leaseA := acquire(t, stale, key)
	released := make(chan error, 1)
	go func() { released <- leaseA.Release(ctx) }()
	waitFor(t, reached, "the release to reach "+failpoint.BetweenGetAndDel)

	// B waits for A's lease to run out, then holds the lock.
	leaseB := acquire(t, b, key)
	close(proceed)
	if err := <-released; err != nil {
		t.Fatalf("the stale release: %v, want nil (its DEL deleted B's lock)", err)
	}
	leaseC, err := c.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("third client while B holds the lock: %v, want it granted (the flaw)", err)
	}
	// Fencing still tells the two holders apart: a fenced resource would
	// refuse B from now on.
	tokB, _ := leaseB.Token()
	tokC, _ := leaseC.Token()
	if tokC <= tokB {
		t.Fatalf("fencing tokens: B %d, C %d; want C's greater", tokB, tokC)
	}
	if err := leaseB.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
		t.Fatalf("B's release: %v, want ErrNotHeld (its GET sees C's token)", err)
	}
	if err := leaseC.Release(ctx); err != nil {
		t.Fatalf("C's release: %v", err)
	}
}

// A client whose clock runs ahead judges a live lock expired and takes it
// over with GETSET while the holder's lease is still valid by the holder's
// own clock; clients on the holder's clock still see the lock held.
func TestGetSetClockAheadTakesALiveLock(t *testing.T) {
	// Long enough that no lease here passes in real time during the test.
	const ttl = 10 * time.Second
	addr, raw := startRedis(t)
	ctx := context.Background()
	key := testKey(t)

	holder := newLocker(t, "redis-getset", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})
	ahead := newLocker(t, "redis-getset", impls.Config{
		Servers: topology.At(topology.Redis, addr), TTL: ttl,
		Clock: func() time.Time { return time.Now().Add(2 * ttl) },
	})
	onTime := newLocker(t, "redis-getset", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})

	leaseH, err := holder.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if p := pttl(t, raw, key); p != -1 {
		t.Fatalf("PTTL of a redis-getset lock = %d, want -1 (expiry lives in the value only)", p)
	}
	if _, err := onTime.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
		t.Fatalf("a client on the holder's clock: %v, want ErrHeld", err)
	}
	if _, err := ahead.TryAcquire(ctx, key); err != nil {
		t.Fatalf("the client whose clock runs ahead: %v, want the lock granted (the flaw)", err)
	}
	validUntil := leaseH.(impls.Deadliner).ValidUntil()
	if !time.Now().Before(validUntil) {
		t.Fatalf("the holder's lease passed (%v) before the takeover was checked", validUntil)
	}
	// Two clients hold the lock. The holder learns it only when it tries
	// to refresh: its timestamp is gone from the key.
	if err := leaseH.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
		t.Fatalf("the holder's refresh after the takeover: %v, want ErrNotHeld", err)
	}
}

// Two clients race for a passed lock. The loser's GETSET comes second and
// fails to acquire, but it has already replaced the winner's expiry with its
// own: the winner's lock now ends when the loser said, and the winner's own
// refresh fails.
func TestGetSetLoserOverwritesWinnersExpiry(t *testing.T) {
	const ttl = 10 * time.Second
	addr, raw := startRedis(t)
	ctx := context.Background()
	key := testKey(t)

	// A lease taken on a clock an hour behind has passed for everyone else.
	past := newLocker(t, "redis-getset", impls.Config{
		Servers: topology.At(topology.Redis, addr), TTL: ttl,
		Clock: func() time.Time { return time.Now().Add(-time.Hour) },
	})
	if _, err := past.TryAcquire(ctx, key); err != nil {
		t.Fatal(err)
	}

	// The loser's clock is the hook: TryAcquire reads it once for the new
	// expiry and a second time, after the GET, to judge the timestamp it
	// read; the second reading blocks until the winner has acquired. The
	// clock runs a minute ahead so that the two expiries differ visibly.
	var reads atomic.Int32
	reached, proceed := make(chan struct{}), make(chan struct{})
	loser := newLocker(t, "redis-getset", impls.Config{
		Servers: topology.At(topology.Redis, addr), TTL: ttl,
		Clock: func() time.Time {
			if reads.Add(1) == 2 {
				close(reached)
				<-proceed
			}
			return time.Now().Add(time.Minute)
		},
	})
	winner := newLocker(t, "redis-getset", impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl})

	lost := make(chan error, 1)
	go func() {
		_, err := loser.TryAcquire(ctx, key)
		lost <- err
	}()
	waitFor(t, reached, "the loser to read the passed timestamp")
	leaseW, err := winner.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("the winner: %v, want the lock granted", err)
	}
	close(proceed)
	if err := <-lost; !errors.Is(err, impls.ErrHeld) {
		t.Fatalf("the loser: %v, want ErrHeld (its GETSET returned the winner's value)", err)
	}

	v, err := raw.Get(ctx, lockKeyOf(key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("lock value %q: %v", v, err)
	}
	want := leaseW.(impls.Deadliner).ValidUntil().UnixMilli()
	if stored <= want {
		t.Fatalf("the key's expiry %d is not the loser's (the winner's is %d, the loser's a minute later)", stored, want)
	}
	if err := leaseW.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
		t.Fatalf("the winner's refresh: %v, want ErrNotHeld (its value was overwritten)", err)
	}
	if err := leaseW.Release(ctx); err != nil {
		t.Fatalf("the winner's release: %v", err)
	}
}

// The lesson in one table: after a lease runs out and another client takes
// the lock, the first holder's late release either is refused (owner-checked
// in one step) or frees the new holder's lock to a third client.
func TestStaleReleaseOfAnExpiredLease(t *testing.T) {
	const ttl = 500 * time.Millisecond
	addr, _ := startRedis(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		freesLock bool
	}{
		{"redis-setnx-px", false},
		{"redis-setnx-expire", false},
		{"redis-lua-setnx-expire", false},
		// Without a pause between its GET and its DEL the check holds.
		{"redis-get-del-release", false},
		{"redis-del-release", true},
		{"redis-getset", true},
		{"redis-getset-own-expiry", false},
	}
	// The locks run side by side, each on a key of its own on the one
	// server: each waits out its own lease, and none reads another's key.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := testKey(t)
			cfg := impls.Config{Servers: topology.At(topology.Redis, addr), TTL: ttl}
			a, b, c := newLocker(t, tt.name, cfg), newLocker(t, tt.name, cfg), newLocker(t, tt.name, cfg)
			stale := acquire(t, a, key)
			time.Sleep(ttl + ttl/2)
			current := acquire(t, b, key)
			err := stale.Release(ctx)
			_, cerr := c.TryAcquire(ctx, key)
			if tt.freesLock {
				if err != nil || cerr != nil {
					t.Fatalf("stale release %v, third client %v; want both nil (the flaw)", err, cerr)
				}
				return
			}
			if !errors.Is(err, impls.ErrNotHeld) || !errors.Is(cerr, impls.ErrHeld) {
				t.Fatalf("stale release %v, third client %v; want ErrNotHeld and ErrHeld", err, cerr)
			}
			if err := current.Release(ctx); err != nil {
				t.Fatalf("the holder's release: %v", err)
			}
		})
	}
}

func lookup(t *testing.T, name string) impls.Spec {
	t.Helper()
	spec, err := impls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// startRedis starts one lock node for a test and returns its address and a
// plain client for looking at the keys.
func startRedis(t *testing.T) (string, *redis.Client) {
	t.Helper()
	topo := conformance.Topology(t, lookup(t, "redis-setnx-px"))
	addr := topo.Endpoints().Addrs(topology.Redis)[0]
	raw := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { raw.Close() })
	return addr, raw
}

func newLocker(t *testing.T, name string, cfg impls.Config) impls.Locker {
	t.Helper()
	l, err := lookup(t, name).New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func acquire(t *testing.T, l impls.Locker, key string) impls.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return lease
}

var keySeq atomic.Int64

func testKey(t *testing.T) string {
	return fmt.Sprintf("broken-%d-%d", time.Now().UnixNano(), keySeq.Add(1))
}

// lockKeyOf is the Redis key under which the package stores the lock for
// key (a hash tag, so that it shares a cluster slot with its fence counter).
func lockKeyOf(key string) string { return "{" + key + "}" }

// pttl asks Redis with the raw command, whose -1 (no expiry) and -2 (no
// key) go-redis would otherwise turn into durations.
func pttl(t *testing.T, raw *redis.Client, key string) int64 {
	t.Helper()
	n, err := raw.Do(context.Background(), "PTTL", lockKeyOf(key)).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
