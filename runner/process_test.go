package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/failpoint"
	_ "github.com/locklab/locklab/impls/all"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	// The workers these tests start are re-executed copies of this binary.
	runner.MaybeRunWorker()
	// Stops every server; a lab dir left behind fails the binary.
	os.Exit(cluster.EndOfTests(m.Run()))
}

// Every way a worker can end leaves no process behind, and what it did
// before it ended is in its history: a SIGKILL loses nothing already done,
// a stop finishes the section under way, a SIGSTOP holds the worker until
// SIGCONT, and a spec the worker cannot run is a precise start error.
func TestWorkerLifecycle(t *testing.T) {
	ctx := context.Background()
	n, err := cluster.StartRedis(ctx, cluster.RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	const ttl = 2 * time.Second
	// Bounds are multiples of the TTL, never tight timings: the machine is shared.
	const bound = 10 * ttl

	tests := []struct {
		name     string
		impl     string
		arm      []string
		startErr string // non-empty: Start must fail with this in its error
		// act ends the worker; it returns whether the worker must have exited
		// on its own (status 0) rather than by a signal.
		act func(t *testing.T, w *runner.Worker) (clean bool)
		// check judges the history the worker left.
		check func(t *testing.T, evs []lin.Event)
	}{
		{
			name: "SIGKILL while holding",
			impl: "redis-setnx-px", arm: []string{failpoint.AfterAcquire},
			act: func(t *testing.T, w *runner.Worker) bool {
				goAndAwait(t, w, "failpoint "+failpoint.AfterAcquire, bound)
				w.Kill()
				return false
			},
			check: func(t *testing.T, evs []lin.Event) {
				if a, r := count(evs, lin.Acquired), count(evs, lin.Released); a != 1 || r != 0 {
					t.Fatalf("history has %d grants and %d releases, want the 1 grant the kill cut short and no release", a, r)
				}
			},
		},
		{
			name: "stop finishes the section under way",
			impl: "redis-setnx-px", arm: []string{failpoint.BeforeRelease},
			act: func(t *testing.T, w *runner.Worker) bool {
				goAndAwait(t, w, "failpoint "+failpoint.BeforeRelease, bound)
				if err := w.ContinueThenLeave(); err != nil {
					t.Fatal(err)
				}
				w.Stop(bound)
				return true
			},
			check: func(t *testing.T, evs []lin.Event) {
				if a, r := count(evs, lin.Acquired), count(evs, lin.Released); a != 1 || r != 1 {
					t.Fatalf("history has %d grants and %d releases, want 1 of each: the section finished, no other began", a, r)
				}
				if c := count(evs, lin.Return); c != 1 {
					t.Fatalf("history has %d returned writes, want 1", c)
				}
				if c := count(evs, lin.Reached); c != 0 {
					t.Fatalf("history has %d reach records from a worker whose clock was never skewed, want none", c)
				}
			},
		},
		{
			name: "SIGSTOP holds the worker until SIGCONT",
			impl: "redis-setnx-px",
			act: func(t *testing.T, w *runner.Worker) bool {
				err := w.Pause(context.Background(), ttl/4, func() error {
					if st := procState(w.Process().PID()); st != "T" {
						return errors.New("worker state " + st + " under SIGSTOP, want T (stopped)")
					}
					// The line waits in the pipe: a stopped worker cannot act on it.
					return w.Go()
				})
				if err != nil {
					t.Fatal(err)
				}
				w.Stop(bound)
				return true
			},
			check: func(t *testing.T, evs []lin.Event) {
				if count(evs, lin.Acquired) != count(evs, lin.Released) {
					t.Fatalf("%d grants but %d releases after a clean stop", count(evs, lin.Acquired), count(evs, lin.Released))
				}
			},
		},
		{
			// A skew set mid-run ("skew D") reaches a lock that reads the
			// client's clock, and the worker says how often on exit; one
			// that was never skewed says nothing.
			name: "clock skewed mid-run reaches a clock-reading lock",
			impl: "redis-getset", arm: []string{failpoint.BeforeRelease},
			act: func(t *testing.T, w *runner.Worker) bool {
				if err := w.SkewClock(3 * ttl); err != nil {
					t.Fatal(err)
				}
				goAndAwait(t, w, "failpoint "+failpoint.BeforeRelease, bound)
				if err := w.ContinueThenLeave(); err != nil {
					t.Fatal(err)
				}
				w.Stop(bound)
				return true
			},
			check: func(t *testing.T, evs []lin.Event) {
				var reads int64 = -1
				for _, ev := range evs {
					if ev.Kind == lin.Reached && ev.Text == runner.ReachClockReads {
						reads = ev.Value
					}
				}
				if reads <= 0 {
					t.Fatalf("clock reads under the skew: %d, want some (-1: no Reached event)", reads)
				}
			},
		},
		{
			name: "unknown lock", impl: "no-such-lock",
			startErr: "no-such-lock",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := runner.WorkerSpec{
				Impl: tt.impl, ID: i, Key: "lifecycle-" + strings.ReplaceAll(tt.name, " ", "-"),
				Servers: topology.At(topology.Redis, n.Addr), Resource: n.Addr, TTL: ttl,
				WorkMin: time.Millisecond, WorkMax: 5 * time.Millisecond,
				History: filepath.Join(dir, "client.jsonl"), Arm: tt.arm,
				AcquireTimeout: bound, WaitForGo: true,
			}
			w, err := runner.Start(ctx, spec, filepath.Join(dir, "client.log"), nil, bound)
			if tt.startErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.startErr) {
					t.Fatalf("start error %v, want one naming %q", err, tt.startErr)
				}
				noneLeft(t, 0)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer w.Kill()
			clean := tt.act(t, w)
			<-w.Process().Done()
			if err := w.Process().Err(); clean && err != nil {
				t.Fatalf("worker exited with %v, want status 0\n%s", err, w.LogTail())
			} else if !clean && err == nil {
				t.Fatal("worker exited with status 0 after a SIGKILL")
			}
			noneLeft(t, w.Process().PID())
			f, err := os.Open(spec.History)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			evs, err := lin.ReadEvents(f)
			if err != nil {
				t.Fatalf("history after %s: %v", tt.name, err)
			}
			tt.check(t, evs)
		})
	}
}

func goAndAwait(t *testing.T, w *runner.Worker, line string, bound time.Duration) {
	t.Helper()
	if err := w.Go(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Await(context.Background(), line, bound); err != nil {
		t.Fatal(err)
	}
}

func count(evs []lin.Event, k lin.Kind) int {
	c := 0
	for _, ev := range evs {
		if ev.Kind == k {
			c++
		}
	}
	return c
}

// procState is the state letter of pid in /proc (R, S, T, ...).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "gone (" + err.Error() + ")"
	}
	// The state follows the command name, which is in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return "unreadable"
	}
	return s[i+2 : i+3]
}

// noneLeft asserts that no worker or server process started by the lab is
// still tracked other than the test's Redis, and that pid's process group
// is gone.
func noneLeft(t *testing.T, pid int) {
	t.Helper()
	if pid > 0 {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("worker process group %d still exists after its end (kill 0: %v)", pid, err)
		}
	}
	// The test's Redis is a lab process in local mode; in container mode it
	// runs in a container and no lab process is left at all.
	want := 1
	if cluster.ContainerMode() {
		want = 0
	}
	if pids := cluster.LivePIDs(); len(pids) != want {
		t.Fatalf("live lab processes %v, want %d (only the test's Redis, if it is a local process)", pids, want)
	}
}
