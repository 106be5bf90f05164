package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/redisson"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

var names = []string{"redis-reentrant", "redis-reentrant-fenced"}

func TestConformance(t *testing.T) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			spec, err := impls.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			var o conformance.Options
			if spec.Caps.Fencing {
				o.KnownDefects = conformance.CounterResetLimitation
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), o)
		})
	}
}

// env is one Redis server shared by the implementation-specific tests, with
// an admin client that looks at the lock's keys behind the lockers' backs.
type env struct {
	spec  impls.Spec
	addr  string
	admin *redis.Client
}

var keySeq atomic.Int64

func (e *env) key() string {
	return fmt.Sprintf("rt-%d-%d", time.Now().UnixNano(), keySeq.Add(1))
}

// The lock's server-side names, as the implementation spells them.
func hashKey(key string) string { return "redisson:{" + key + "}" }

func (e *env) locker(t *testing.T, ttl time.Duration) impls.Locker {
	t.Helper()
	l, err := e.spec.New(impls.Config{Servers: topology.At(topology.Redis, e.addr), TTL: ttl, ClientID: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func startEnv(t *testing.T) *redis.Client {
	t.Helper()
	topo, err := cluster.Start(context.Background(), topology.Of(topology.RedisNodes(1)), cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	admin := redis.NewClient(&redis.Options{Addr: topo.Endpoints().Addrs(topology.Redis)[0], MaxRetries: -1})
	t.Cleanup(func() { admin.Close() })
	return admin
}

// forEach runs f once per registered variant against one fresh server.
func forEach(t *testing.T, f func(t *testing.T, e *env)) {
	admin := startEnv(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			spec, err := impls.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			f(t, &env{spec: spec, addr: admin.Options().Addr, admin: admin})
		})
	}
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

func release(t *testing.T, lease impls.Lease) {
	t.Helper()
	if err := lease.Release(context.Background()); err != nil {
		t.Fatalf("release %s: %v", lease.Key(), err)
	}
}

func wantHeld(t *testing.T, l impls.Locker, key, when string) {
	t.Helper()
	if _, err := l.TryAcquire(context.Background(), key); !errors.Is(err, impls.ErrHeld) {
		t.Fatalf("%s: another client's TryAcquire: %v, want ErrHeld", when, err)
	}
}

func TestReentrantCountsHolds(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		key := e.key()
		a, b := e.locker(t, time.Second), e.locker(t, time.Second)
		const depth = 3
		var leases []impls.Lease
		for i := 1; i <= depth; i++ {
			leases = append(leases, acquire(t, a, key))
			vals, err := e.admin.HGetAll(ctx, hashKey(key)).Result()
			if err != nil {
				t.Fatal(err)
			}
			var counts []string
			for f, v := range vals {
				if !strings.HasPrefix(f, ":") {
					counts = append(counts, v)
				}
			}
			if len(counts) != 1 || counts[0] != strconv.Itoa(i) {
				t.Fatalf("after %d grants the hash is %v, want one owner with count %d", i, vals, i)
			}
		}
		// Re-entries return the first grant's token; the plain variant has none.
		tok0, fenced := leases[0].Token()
		if fenced != e.spec.Caps.Fencing {
			t.Fatalf("Token() reports a token: %v, want %v", fenced, e.spec.Caps.Fencing)
		}
		for i, l := range leases {
			if tok, _ := l.Token(); tok != tok0 {
				t.Fatalf("grant %d has token %d, want the first grant's %d", i, tok, tok0)
			}
		}
		for i := depth - 1; i >= 0; i-- {
			wantHeld(t, b, key, fmt.Sprintf("with %d holds left", i+1))
			release(t, leases[i])
		}
		if n, err := e.admin.Exists(ctx, hashKey(key)).Result(); err != nil || n != 0 {
			t.Fatalf("after the last release EXISTS = %d (%v), want 0", n, err)
		}
		l2 := acquire(t, b, key)
		if tok, ok := l2.Token(); ok && tok <= tok0 {
			t.Fatalf("the next holder's token %d is not greater than %d", tok, tok0)
		}
		release(t, l2)
	})
}

func TestWatchdogKeepsIdleHolderAlive(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		const ttl = time.Second
		key := e.key()
		a, b := e.locker(t, ttl), e.locker(t, ttl)
		lease := acquire(t, a, key)
		time.Sleep(3 * ttl) // the holder does nothing; only the watchdog runs
		wantHeld(t, b, key, "3 TTLs after the grant")
		select {
		case <-lease.Lost():
			t.Fatal("Lost() closed while the watchdog renewed the lock")
		default:
		}
		if err := lease.Refresh(context.Background()); err != nil {
			t.Fatalf("refresh of a watched lock: %v", err)
		}
		release(t, lease)
		release(t, acquire(t, b, key))
	})
}

func TestCloseWithoutReleaseFreesAfterTTL(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		const ttl = time.Second
		key := e.key()
		a, b := e.locker(t, ttl), e.locker(t, ttl)
		acquire(t, a, key)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		// Close does not release: the lock is still there...
		wantHeld(t, b, key, "right after the holder's Close")
		// ...until its TTL runs out with no watchdog to renew it.
		ctx, cancel := context.WithTimeout(context.Background(), 10*ttl)
		defer cancel()
		lease, err := b.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("acquire after the holder closed: %v, want the lock once its TTL ran out", err)
		}
		release(t, lease)
	})
}

// commandCalls sums INFO commandstats calls of the given commands.
func commandCalls(t *testing.T, admin *redis.Client, cmds ...string) int {
	t.Helper()
	info, err := admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name = strings.TrimPrefix(name, "cmdstat_")
		if !ok || !strings.HasPrefix(rest, "calls=") {
			continue
		}
		for _, c := range cmds {
			if name == c {
				n, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(rest, ",")[0], "calls="))
				total += n
			}
		}
	}
	return total
}

// blockedClients waits until n clients are blocked in BLPOP on the server.
func blockedClients(t *testing.T, admin *redis.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := admin.Info(context.Background(), "clients").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "blocked_clients:"+strconv.Itoa(n)+"\r") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d clients blocked after 5s: %s", n, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWaiterIsWokenWithoutPolling(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// A long TTL: a waiter that got the lock before it ran out can only
		// have been woken by the release.
		const ttl = 10 * time.Second
		key := e.key()
		holder, waiter := e.locker(t, ttl), e.locker(t, ttl)
		lease := acquire(t, holder, key)
		if err := e.admin.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		start := time.Now()
		go func() {
			wctx, cancel := context.WithTimeout(ctx, ttl/2)
			defer cancel()
			l, err := waiter.Acquire(wctx, key)
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
		blockedClients(t, e.admin, 1)
		time.Sleep(time.Second)

		// One attempt, then a BLPOP of at most a second and an attempt
		// after it; a poller would have made dozens in this second.
		attempts := commandCalls(t, e.admin, "evalsha", "eval")
		t.Logf("waiter blocked for 1s: %d server commands in all, %d scripts", commandCalls(t, e.admin, allCommands(t, e.admin)...), attempts)
		if attempts > 3 {
			t.Fatalf("while blocked for 1s the waiter ran %d scripts, want <= 3", attempts)
		}
		select {
		case err := <-got:
			t.Fatalf("waiter returned while the lock was held: %v", err)
		default:
		}

		release(t, lease)
		if err := <-got; err != nil {
			t.Fatalf("waiter: %v, want the lock once the holder released (well before the TTL)", err)
		}
		if waited := time.Since(start); waited >= ttl-time.Second {
			t.Fatalf("waiter got the lock after %v: woken by its TTL fallback, not by the release", waited)
		}
	})
}

// TestReleaseWakesOneWaiter: with several clients waiting, a release wakes
// one of them, and only it tries again; a waiter whose context ends while
// it is blocked returns within a BLPOP's bound and lets the next one in.
func TestReleaseWakesOneWaiter(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		const ttl = 10 * time.Second
		const waiters = 4
		key := e.key()
		holder := e.locker(t, ttl)
		// A first release loads its script (EVALSHA, NOSCRIPT, EVAL), which
		// would count as two scripts below.
		release(t, acquire(t, holder, key))
		lease := acquire(t, holder, key)
		granted := make(chan impls.Lease, waiters)
		for range waiters {
			w := e.locker(t, ttl)
			go func() {
				wctx, cancel := context.WithTimeout(ctx, ttl/2)
				defer cancel()
				l, err := w.Acquire(wctx, key)
				if err != nil {
					t.Errorf("waiter: %v", err)
					l = nil
				}
				granted <- l
			}()
		}
		blockedClients(t, e.admin, waiters)
		if err := e.admin.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		release(t, lease)
		first := <-granted
		if first == nil {
			t.FailNow()
		}
		time.Sleep(200 * time.Millisecond)
		// The woken waiter's attempt is the only script since the release.
		if n := commandCalls(t, e.admin, "evalsha", "eval"); n != 2 {
			t.Fatalf("%d scripts after the release, want 2 (the release and one woken waiter's grant)", n)
		}
		blockedClients(t, e.admin, waiters-1)
		// Each release after that hands on to one more waiter.
		l := first
		for range waiters - 1 {
			release(t, l)
			select {
			case l = <-granted:
				if l == nil {
					t.FailNow()
				}
			case <-time.After(ttl / 2):
				t.Fatal("a release did not wake the next waiter")
			}
		}
		release(t, l)
	})
}

func TestCancelledWaitReturns(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		const ttl = 10 * time.Second
		key := e.key()
		holder, waiter := e.locker(t, ttl), e.locker(t, ttl)
		lease := acquire(t, holder, key)
		// No deadline: only the cancel can end the wait, and a BLPOP in
		// progress cannot be interrupted, so it ends within its bound.
		wctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := waiter.Acquire(wctx, key)
			got <- err
		}()
		blockedClients(t, e.admin, 1)
		start := time.Now()
		cancel()
		select {
		case err := <-got:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled Acquire: %v, want context.Canceled", err)
			}
			t.Logf("returned %v after the cancel", time.Since(start))
		case <-time.After(3 * time.Second):
			t.Fatal("cancelled Acquire still waiting after 3s")
		}
		release(t, lease)
	})
}

func TestLostWhenKeyDeletedBehindHoldersBack(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		const ttl = time.Second
		key := e.key()
		a, b := e.locker(t, ttl), e.locker(t, ttl)
		lease := acquire(t, a, key)
		if err := e.admin.Del(ctx, hashKey(key)).Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-lease.Lost():
		case <-time.After(5 * ttl):
			t.Fatal("Lost() not closed after the lock's key was deleted")
		}
		tests := []struct {
			op string
			do func(context.Context) error
		}{
			{"refresh", lease.Refresh},
			{"release", lease.Release},
		}
		for _, tt := range tests {
			if err := tt.do(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("%s of a lost lease: %v, want ErrNotHeld", tt.op, err)
			}
		}
		// Neither revived the lock.
		if n, err := e.admin.Exists(ctx, hashKey(key)).Result(); err != nil || n != 0 {
			t.Fatalf("EXISTS after a lost lease's refresh and release = %d (%v), want 0", n, err)
		}
		release(t, acquire(t, b, key))
	})
}

func TestRegrantAfterLossStartsNewHold(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// A long TTL keeps the watchdog from noticing first: the new grant
		// itself must tell that the old ones are gone.
		const ttl = 10 * time.Second
		key := e.key()
		a, b := e.locker(t, ttl), e.locker(t, ttl)
		old := acquire(t, a, key)
		if err := e.admin.Del(ctx, hashKey(key)).Err(); err != nil {
			t.Fatal(err)
		}
		fresh := acquire(t, a, key)
		select {
		case <-old.Lost():
		default:
			t.Fatal("the old lease's Lost() is open after a new grant found the key free")
		}
		// The stale lease must not take a hold off the new grant.
		if err := old.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
			t.Fatalf("release of the lost lease: %v, want ErrNotHeld", err)
		}
		wantHeld(t, b, key, "after the lost lease's release")
		release(t, fresh)
		release(t, acquire(t, b, key))
	})
}

// TestAcquireAfterWaitingBlocksAtOnce: a client that waited for its last
// grant and has just released blocks at once on its next Acquire, its
// attempt behind the BLPOP, trusting the token its release left to be there
// if the lock is free. Taken, its attempt runs right after the pop; gone
// (the lock freed without a release), the wait ends within maxBlock.
func TestAcquireAfterWaitingBlocksAtOnce(t *testing.T) {
	forEach(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		const ttl = 2 * time.Second // maxBlock: 1s
		key := e.key()
		holder, waiter := e.locker(t, ttl), e.locker(t, ttl)
		lease := acquire(t, holder, key)
		got := make(chan impls.Lease, 1)
		go func() {
			l, err := waiter.Acquire(ctx, key)
			if err != nil {
				t.Errorf("waiter: %v", err)
			}
			got <- l
		}()
		blockedClients(t, e.admin, 1)
		release(t, lease)
		l := <-got
		if l == nil {
			t.FailNow()
		}
		// The waiter's release leaves its token: nobody waits.
		release(t, l)
		if err := e.admin.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		release(t, acquire(t, waiter, key))
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Fatalf("the acquire after a wait took %v with its token on the list, want one round trip", took)
		}
		// BLPOP and one attempt for the acquire, one script for the release.
		if n := commandCalls(t, e.admin, "blpop"); n != 1 {
			t.Fatalf("%d BLPOPs for the acquire after a wait, want 1", n)
		}
		if n := commandCalls(t, e.admin, "pttl"); n != 1 {
			t.Fatalf("%d PTTLs for the acquire after a wait, want 1 (its attempt's)", n)
		}

		// The token gone, as when the lock is freed without a release.
		if err := e.admin.Del(ctx, "redisson:{"+key+"}:wake").Err(); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		release(t, acquire(t, waiter, key))
		if took := time.Since(start); took > 1500*time.Millisecond {
			t.Fatalf("the acquire of a free lock with no token took %v, want maxBlock (1s) at most", took)
		} else {
			t.Logf("free lock, no token: granted after %v", took)
		}
	})
}

// allCommands names every command INFO commandstats lists, for the log.
func allCommands(t *testing.T, admin *redis.Client) []string {
	t.Helper()
	info, err := admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(info, "\n") {
		if name, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && strings.HasPrefix(name, "cmdstat_") {
			out = append(out, strings.TrimPrefix(name, "cmdstat_"))
		}
	}
	return out
}
