package scenarios_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// TestInteroperation puts a lock of the lab and a guest that follows the same
// algorithm on the same servers on one lock at once: half the clients (worker
// processes, each with its guest child) run one, half the other, on one
// protected counter. The checker must find them exclusive, and each side must
// have been granted, or the run proved nothing about the two together. With
// fencing, the two sides' tokens must also be one sequence: in grant order,
// each greater than the one before, whichever side issued it.
//
// It lives here, not in impls/guest, because a judged run needs the engine
// and worker processes (this package's TestMain re-executes the binary as
// one), which a lock family's own tests must not reach up to.
func TestInteroperation(t *testing.T) {
	same := func(k string) string { return k }
	tests := []struct {
		lab, guest string
		// guestKey is the server key the lab's lock keeps a lock key
		// under: the guest is given it as its lock's name, since each lab
		// lock maps its key to a key of its own shape.
		guestKey func(key string) string
		fencing  bool
	}{
		{"redis-setnx-px", "guest:redis-py", func(k string) string { return "{" + k + "}" }, false},
		{"redis-setnx-px", "guest:node-redlock", func(k string) string { return "{" + k + "}" }, false},
		{"redlock", "guest:node-redlock-5", same, false},
		{"redis-reentrant", "guest:node-redisson", func(k string) string { return "redisson:{" + k + "}" }, false},
		// Both make "_c_<guid>-lock-<seq>" children under
		// /locklab/locks/<key>, and both order them by the sequence
		// number; both tokens are the directory's czxid plus it.
		{"zookeeper", "guest:curator", same, false},
		{"zookeeper", "guest:curator", same, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s+%s/fenced=%t", tt.lab, tt.guest, tt.fencing), func(t *testing.T) {
			lab, err := impls.Lookup(tt.lab)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := impls.Lookup(tt.guest); err != nil {
				t.Fatal(err)
			}
			side := func(client int) string { return map[bool]string{false: tt.lab, true: tt.guest}[client%2 == 1] }
			grants := map[string]int{}
			var acquired []lin.Event
			// Its own job body, for clients of two locks: every other run's
			// workers (Env.StartWorker), servers (engine.Run) and checker
			// (Env.Judge), with no fault.
			job := engine.Job{Name: "interop", Body: func(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
				var workers []*engine.Worker
				// Whatever happens, no worker outlives the run.
				defer func() { env.StopWorkers(workers) }()
				for id := 0; id < 4; id++ {
					w, err := env.StartWorker(ctx, id, env.Topo.Endpoints(), func(ws *engine.WorkerSpec) {
						if id%2 == 1 {
							ws.Impl, ws.LockKey = tt.guest, tt.guestKey(env.Key)
							return
						}
						// The lab's clients poll within milliseconds; a
						// guest's waiter may retry every 200 ms
						// (node-redlock) or wait for a release notice the
						// lab's lock sends on another channel
						// (node-redisson). Without a pause after each
						// release the lab's clients pass the lock between
						// themselves and the guest is never granted.
						ws.Think = 50 * time.Millisecond
					})
					if err != nil {
						return nil, err
					}
					workers = append(workers, w)
				}
				env.Phase(engine.PhaseWorkload)
				select {
				case <-time.After(3 * time.Second):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				env.Phase(engine.PhaseAfter)
				env.StopWorkers(workers)
				if err := env.Collect(workers); err != nil {
					return nil, err
				}
				env.Phase(engine.PhaseStop)
				for _, ev := range env.Rec.Events() {
					if ev.Kind == lin.Acquired {
						grants[side(ev.Client)]++
						acquired = append(acquired, ev)
					}
				}
				out := &engine.Outcome{Figures: map[string]float64{}, Clients: len(workers), Processes: true}
				return out, env.Judge(out)
			}}
			out, err := engine.Run(context.Background(), job, engine.Options{
				Impl: lab, Fencing: tt.fencing, TTL: time.Second, Seed: 42, OutDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != checker.Safe {
				t.Fatalf("%s and %s on one lock: verdict %s, want safe (%s)", tt.lab, tt.guest, out.Verdict, out.HTML)
			}
			for _, name := range []string{tt.lab, tt.guest} {
				if grants[name] == 0 {
					t.Fatalf("%s was never granted (grants %v): the run says nothing about the two together", name, grants)
				}
			}
			if tt.fencing {
				// Exclusive grants are recorded one after another, so
				// their record times are their grant order.
				slices.SortFunc(acquired, func(a, b lin.Event) int { return cmp.Compare(a.Time, b.Time) })
				for i, ev := range acquired {
					if ev.Token == 0 {
						t.Fatalf("%s's grant to client %d carries no fencing token", side(ev.Client), ev.Client)
					}
					if prev := acquired[max(i-1, 0)]; i > 0 && ev.Token <= prev.Token {
						t.Fatalf("tokens are not one sequence: %s's grant to client %d has token %d after %s's %d",
							side(ev.Client), ev.Client, ev.Token, side(prev.Client), prev.Token)
					}
				}
			}
			t.Logf("safe; grants %v", grants)
		})
	}
}
