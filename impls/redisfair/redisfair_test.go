package redisfair_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/impls/redisfair"
	"github.com/locklab/locklab/topology"
)

// waiterEnv turns the test binary into a waiter process: "addr key ttl-ms".
// It queues for the lock and, once granted, prints "granted <fence>" and
// holds it until killed.
const waiterEnv = "LOCKLAB_REDISFAIR_WAITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(waiterEnv); spec != "" {
		os.Exit(runWaiter(spec))
	}
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

func runWaiter(spec string) int {
	var addr, key string
	var ttlMS int64
	if _, err := fmt.Sscan(spec, &addr, &key, &ttlMS); err != nil || ttlMS <= 0 {
		fmt.Fprintln(os.Stderr, "waiter spec:", err)
		return 2
	}
	l := redisfair.New(addr, time.Duration(ttlMS)*time.Millisecond)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acquire:", err)
		return 1
	}
	fence, _ := lease.Token()
	fmt.Println("granted", fence)
	<-ctx.Done()
	return 0
}

func TestConformance(t *testing.T) {
	spec, err := impls.Lookup("redis-fair")
	if err != nil {
		t.Fatal(err)
	}
	// The fencing counter is a Redis key like redis-setnx-px's: reset, its
	// tokens go back (the suite asserts this recorded limitation shows).
	conformance.Run(t, spec, conformance.Topology(t, spec), conformance.Options{KnownDefects: conformance.CounterResetLimitation})
}

// env is one Redis server for the fairness tests, with an admin client
// that watches the queue behind the lockers' backs.
type env struct {
	addr  string
	admin *redis.Client
	ttl   time.Duration
}

const ttl = time.Second

func startEnv(t *testing.T) *env {
	t.Helper()
	topo, err := cluster.Start(context.Background(), topology.Of(topology.RedisNodes(1)), cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	admin := redis.NewClient(&redis.Options{Addr: topo.Endpoints().Addrs(topology.Redis)[0], MaxRetries: -1})
	t.Cleanup(func() { admin.Close() })
	return &env{addr: topo.Endpoints().Addrs(topology.Redis)[0], admin: admin, ttl: ttl}
}

var keySeq atomic.Int64

func (e *env) key() string { return fmt.Sprintf("fair-%d-%d", time.Now().UnixNano(), keySeq.Add(1)) }

func (e *env) locker(t *testing.T) impls.Locker {
	t.Helper()
	l := redisfair.New(e.addr, e.ttl)
	t.Cleanup(func() { l.Close() })
	return l
}

// queued waits until n waiters stand in key's queue on the server.
func (e *env) queued(t *testing.T, key string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := e.admin.LLen(context.Background(), "fair:{"+key+"}:queue").Result()
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue of %s holds %d waiters, want %d", key, got, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestGrantsInArrivalOrder queues waiters one at a time behind a holder and
// checks that the lock passes through them in the order they arrived, each
// holding its section before the next.
func TestGrantsInArrivalOrder(t *testing.T) {
	e := startEnv(t)
	ctx := context.Background()
	key := e.key()
	holder := e.locker(t)
	lease, err := holder.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 6
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
		errs  = make(chan error, waiters)
	)
	for i := 0; i < waiters; i++ {
		l := e.locker(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			lease, err := l.Acquire(actx, key)
			if err != nil {
				errs <- fmt.Errorf("waiter %d: %w", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			if err := lease.Release(ctx); err != nil {
				errs <- fmt.Errorf("waiter %d release: %w", i, err)
			}
		}()
		// The next waiter starts only once this one stands in the queue.
		e.queued(t, key, int64(i+1))
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, got := range order {
		if got != i {
			t.Fatalf("grants in order %v, want arrival order 0..%d", order, waiters-1)
		}
	}
}

// TestDeadWaiterDoesNotStallQueue puts a waiter process in the queue right
// behind the holder and a live waiter behind it, then kills or freezes the
// process and releases at once: before the dead waiter's heartbeat could
// lapse, so the release hands the lock to it. The live waiter must still
// get the lock within one TTL of the release. This is liveness, not speed:
// the bound is the lock's own promise, derived from the TTL.
func TestDeadWaiterDoesNotStallQueue(t *testing.T) {
	tests := []struct {
		name string
		sig  syscall.Signal
	}{
		{"sigkill", syscall.SIGKILL},
		{"sigstop", syscall.SIGSTOP},
	}
	e := startEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := e.key()
			holder := e.locker(t)
			lease, err := holder.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d", waiterEnv, e.addr, key, e.ttl.Milliseconds()))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			proc, err := cluster.Spawn(cmd)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proc.Signal(syscall.SIGCONT); proc.Kill() })
			lines := make(chan string, 4)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			e.queued(t, key, 1)

			live := e.locker(t)
			granted := make(chan time.Time, 1)
			go func() {
				actx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				l, err := live.Acquire(actx, key)
				if err != nil {
					t.Errorf("live waiter: %v", err)
					close(granted)
					return
				}
				granted <- time.Now()
				l.Release(ctx)
			}()
			e.queued(t, key, 2)

			if tt.sig == syscall.SIGKILL {
				proc.Kill()
			} else if err := proc.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			released := time.Now()
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
			// The release must have handed the lock to the dead waiter
			// (still first in line): otherwise this test shows nothing.
			owner, err := e.admin.Get(ctx, "fair:{"+key+"}").Result()
			if err != nil {
				t.Fatalf("no grant right after the release: %v", err)
			}
			if n, _ := e.admin.LLen(ctx, "fair:{"+key+"}:queue").Result(); n != 1 {
				t.Fatalf("after the release the queue holds %d waiters, want the live one (owner %s)", n, owner)
			}
			select {
			case at, ok := <-granted:
				if !ok {
					return
				}
				if wait := at.Sub(released); wait > e.ttl {
					t.Fatalf("the live waiter got the lock %v after the release, past one TTL (%v)", wait, e.ttl)
				} else {
					t.Logf("%s waiter ahead: the live waiter got the lock %v after the release", tt.name, wait)
				}
			case <-time.After(10 * e.ttl):
				t.Fatalf("the live waiter was not granted within %v of the release", 10*e.ttl)
			}
			if tt.sig == syscall.SIGSTOP {
				// Thawed, the frozen waiter reads the hand-off pushed to it
				// while it was frozen, long lapsed: it must not take that
				// for the lock. It claims it, finds it gone, and takes the
				// free lock with a grant of its own, which is the one the
				// server holds (a waiter trusting the stale push would
				// report the lapsed grant's older token).
				if err := proc.Signal(syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
				select {
				case line := <-lines:
					var fence uint64
					if _, err := fmt.Sscanf(line, "granted %d", &fence); err != nil {
						t.Fatalf("thawed waiter said %q, want granted and a token", line)
					}
					var held uint64
					v, err := e.admin.Get(ctx, "fair:{"+key+"}").Result()
					if err == nil {
						// The lock's value is "<fence> <owner>".
						_, err = fmt.Sscanf(v, "%d ", &held)
					}
					if err != nil {
						t.Fatalf("the thawed waiter reports grant %d, but the server holds none: %v", fence, err)
					}
					if held != fence {
						t.Fatalf("the thawed waiter reports grant %d, the server holds grant %d", fence, held)
					}
				case <-time.After(10 * e.ttl):
					t.Fatal("the thawed waiter was not granted the free lock")
				}
			}
		})
	}
}
