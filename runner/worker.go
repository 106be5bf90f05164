// Package runner runs one lock client as a process of its own, so that a
// fault can hit it as it would hit a real client: a crash is a SIGKILL, a
// pause a SIGSTOP, a partition its own network namespace. It holds both
// ends of that: the worker side (MaybeRunWorker turns a re-executed test or
// bench binary into a client that runs workload sections) and the
// supervisor side (Worker: start, await, go/continue, kill, pause, stop).
// It must not import scenarios, nemesis or checker: scenarios imports it.
package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
	"github.com/locklab/locklab/topology"
	"github.com/locklab/locklab/workload"
)

// ReachClockReads names the Reached event a worker whose clock was skewed
// records on exit (lin.ReachClockReads).
const ReachClockReads = lin.ReachClockReads

// workerEnv carries a WorkerSpec (JSON) to a re-executed binary: its
// presence turns the process into a worker.
const workerEnv = "LOCKLAB_WORKER"

// WorkerSpec is everything a worker process needs to be one client.
type WorkerSpec struct {
	Impl string
	ID   int
	// Key names the protected counter and, unless LockKey is set, the lock.
	Key string
	// LockKey, when set, is the name the lock is acquired under instead of
	// Key: an interoperation run gives a guest the lab lock's own server
	// key, so the two contend for one lock while sharing one counter.
	LockKey string
	// Servers are the lock servers' endpoints by kind.
	Servers  topology.Endpoints
	Resource string
	TTL      time.Duration
	Fenced   bool
	// ClockSkew moves the client's own clock from the start (only
	// clock-reading locks care); "skew D" moves it mid-run (SkewClock).
	ClockSkew time.Duration
	// Work is the critical section's work: uniform in [WorkMin, WorkMax].
	WorkMin, WorkMax time.Duration
	// FirstWork, when set, replaces the work of the first section (a slow
	// holder that stays alive).
	FirstWork time.Duration
	// Think is the pause between a release and the next acquire: without
	// it a polling lock goes back to the client that just released it.
	Think time.Duration
	Seed  int64
	// History is the file the worker appends its events to.
	History string
	// Arm lists failpoints where the worker stops the first time, reports
	// "failpoint NAME" on stdout and waits for "continue" on stdin.
	Arm []string
	// Limit makes each section a coupon sale (see workload.Client.Limit).
	Limit int64
	// AcquireTimeout bounds one acquire.
	AcquireTimeout time.Duration
	// WaitForGo holds the worker after "ready" until it reads "go": the
	// others wait while the victim takes the first grant and reaches its
	// failpoint, so every run of a scenario starts from the same state.
	WaitForGo bool
}

// MaybeRunWorker turns this process into a worker when it was started as
// one, and never returns then. Binaries that run fault scenarios (the bench
// command and the test binaries) call it first thing in main or TestMain.
func MaybeRunWorker() {
	raw := os.Getenv(workerEnv)
	if raw == "" {
		return
	}
	if err := runWorker(raw); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runWorker(raw string) error {
	var ws WorkerSpec
	if err := json.Unmarshal([]byte(raw), &ws); err != nil {
		return fmt.Errorf("decode worker spec: %w", err)
	}
	spec, err := impls.Lookup(ws.Impl)
	if err != nil {
		return err
	}
	hist, err := os.OpenFile(ws.History, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open history: %w", err)
	}
	defer hist.Close()
	// Unbuffered: each event reaches the kernel before the next step, so a
	// SIGKILL loses nothing already done.
	rec := lin.NewRecorder(hist)

	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	say := func(line string) {
		outMu.Lock()
		defer outMu.Unlock()
		out.WriteString(line + "\n")
		out.Flush()
	}

	var stopping atomic.Bool
	// stopped ends an acquire still waiting when "stop" comes: the run is
	// over, and waiting on (a waiter behind three long sections waited a
	// second here) only added a section after the run's end to every
	// stop. A section already granted still runs to its end.
	stopped, stop := context.WithCancel(context.Background())
	defer stop()
	// The work bounds can change mid-run ("work MIN MAX", SetWork).
	var workMin, workMax atomic.Int64
	workMin.Store(int64(ws.WorkMin))
	workMax.Store(int64(ws.WorkMax))
	// The clock's skew can change mid-run ("skew D", SkewClock): a
	// client clock skew is a nemesis fault with an inject and a heal.
	var skew atomic.Int64
	var skewed atomic.Bool
	skew.Store(int64(ws.ClockSkew))
	skewed.Store(ws.ClockSkew != 0)
	cont := make(chan struct{}, len(ws.Arm)+1)
	goCh := make(chan struct{})
	var goOnce sync.Once
	start := func() { goOnce.Do(func() { close(goCh) }) }
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if f := strings.Fields(line); len(f) == 2 && f[0] == "skew" {
				if d, err := time.ParseDuration(f[1]); err == nil {
					skew.Store(int64(d))
					skewed.Store(skewed.Load() || d != 0)
				}
				continue
			}
			if f := strings.Fields(line); len(f) == 3 && f[0] == "work" {
				lo, err1 := time.ParseDuration(f[1])
				hi, err2 := time.ParseDuration(f[2])
				if err1 == nil && err2 == nil && 0 <= lo && lo <= hi {
					workMin.Store(int64(lo))
					workMax.Store(int64(hi))
				}
				continue
			}
			switch line {
			case "continue":
				cont <- struct{}{}
			case "go":
				start()
			case "stop":
				stopping.Store(true)
				stop()
				start()
			}
		}
		// The parent is gone or closed our stdin: finish up.
		stopping.Store(true)
		stop()
		start()
		close(cont)
	}()

	armed := map[string]bool{}
	for _, a := range ws.Arm {
		armed[a] = true
	}
	var armMu sync.Mutex
	// struck says a failpoint fired inside the acquire in flight: the
	// server has granted (a failpoint inside an acquire sits after its
	// write), and the client is stopped by the lab, not waiting.
	var struck atomic.Bool
	hit := func(name string) {
		armMu.Lock()
		fire := armed[name]
		delete(armed, name)
		armMu.Unlock()
		if !fire {
			return
		}
		struck.Store(true)
		say("failpoint " + name)
		<-cont
	}

	cfg := impls.Config{
		Servers: ws.Servers,
		TTL:     ws.TTL, ClientID: fmt.Sprintf("client-%d", ws.ID), Failpoint: hit,
	}
	// The reads of a skewed clock count, and a worker whose clock was
	// ever skewed says how many on exit: whether the skew reached the lock
	// at all, as a lock that never reads the client's clock cannot be
	// judged by this fault. An unskewed clock is time.Now itself.
	var reads atomic.Int64
	cfg.Clock = func() time.Time {
		d := time.Duration(skew.Load())
		if d != 0 {
			reads.Add(1)
		}
		return time.Now().Add(d)
	}
	defer func() {
		if skewed.Load() {
			rec.Record(lin.Event{Kind: lin.Reached, Client: ws.ID, Text: ReachClockReads, Value: reads.Load()})
		}
	}()
	locker, err := spec.New(cfg)
	if err != nil {
		return fmt.Errorf("new %s: %w", ws.Impl, err)
	}
	defer locker.Close()
	counter := resource.New(ws.Resource, ws.Key)
	defer counter.Close()
	lockKey := ws.Key
	if ws.LockKey != "" {
		lockKey = ws.LockKey
	}
	rng := rand.New(rand.NewPCG(uint64(ws.Seed), uint64(ws.ID)))
	first := true
	client := &workload.Client{
		ID: ws.ID, Key: lockKey, Locker: locker, Counter: counter, Rec: rec, Fenced: ws.Fenced, Hit: hit, Limit: ws.Limit,
		WatchLost: spec.Caps.LostNotify,
		Work: func() time.Duration {
			if first {
				first = false
				if ws.FirstWork > 0 {
					return ws.FirstWork
				}
			}
			lo, hi := workMin.Load(), workMax.Load()
			if hi <= lo {
				return time.Duration(lo)
			}
			return time.Duration(lo + rng.Int64N(hi-lo))
		},
	}
	say("ready")
	if ws.WaitForGo {
		<-goCh
	}
	for !stopping.Load() {
		// One deadline for the acquire and the section after it, as
		// before; only the acquire also ends with the stop: a granted
		// section always runs to its end as it would have.
		deadline := time.Now().Add(ws.AcquireTimeout)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		struck.Store(false)
		abandon := context.AfterFunc(stopped, func() {
			// The stop ends an acquire still waiting, not one the lab
			// stopped at a failpoint inside it: that holder goes on
			// ("stop" then "continue", ContinueThenLeave) to finish its
			// acquire as a live client would, the rest of it (a WAIT for
			// replicas, an EXPIRE) sent with a live context. Cancelled,
			// the rest failed at once, whatever the servers would have
			// answered, and the fault judged the lock's handling of a
			// cancelled context instead.
			if !struck.Load() {
				cancel()
			}
		})
		asked := client.Asking()
		lease, err := locker.Acquire(ctx, lockKey)
		abandon()
		waited := ctx.Err() != nil
		cancel()
		if err != nil && stopped.Err() != nil && !struck.Load() {
			// Abandoned because the run ended, not a failure of the lock.
			// (A struck acquire was not abandoned: its failure is recorded.)
			break
		}
		if err == nil {
			sctx, cancel := context.WithDeadline(context.Background(), deadline)
			client.Run(sctx, lease)
			cancel()
			if ws.Think > 0 {
				// Thinking ends with the stop too: no section follows it.
				select {
				case <-time.After(ws.Think):
				case <-stopped.Done():
				}
			}
		}
		if err != nil {
			rec.Record(lin.Event{Kind: lin.AcquireFailed, Client: ws.ID, Text: errorKind(err), Asked: asked})
			if !waited {
				// A failing backend answers at once: do not spin on it.
				// (Not errors.Is(err, context.DeadlineExceeded): a dial's
				// "i/o timeout" matches that too, and go-redis hands a
				// failed dial's error straight back to every request for
				// a while, which spun this loop 100,000 times a second
				// under a slow network.)
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	return rec.Err()
}

// errorKind names an acquire error's kind for the history.
func errorKind(err error) string {
	switch {
	case errors.Is(err, impls.ErrHeld):
		return "held"
	case errors.Is(err, impls.ErrUnknown):
		return lin.FailedUnknown + err.Error()
	case errors.Is(err, impls.ErrBackend):
		return lin.FailedBackend + err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	default:
		return err.Error()
	}
}
