package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// queuedLocks are the locks whose waiters stand in a queue on the server,
// each granted in its turn: a waiter that dies in line can hold up the ones
// behind it. Locks whose waiters race for a free lock (polling, or pub/sub
// wake-ups that all retry) have no line to block, so the scenario does not
// apply to them.
var queuedLocks = []string{"redis-fair", "zookeeper", "peer-zk-lock"}

// Roles in the queue scenarios: the victim (client 0) is the waiter that
// dies in line; client 1 holds the lock while the line forms; the others
// are live waiters behind the victim.
const queueHolder = 1

func init() {
	Register(queueScenario("queued-waiter-crash",
		"a waiter is SIGKILLed while queued right behind the holder, which then releases; the next live waiter must hold within one TTL",
		func(ctx context.Context, r *faultRun, release func() error) error {
			r.victim.Kill(" (queued behind the holder)")
			settle(ctx, silentBeforeRelease(r.env))
			return release()
		}))
	Register(queueScenario("queued-waiter-pause",
		"a waiter is SIGSTOPped while queued right behind the holder, which then releases; the next live waiter must hold within one TTL",
		func(ctx context.Context, r *faultRun, release func() error) error {
			return r.victim.Pause(ctx, pastTTL(r.env), " (queued behind the holder)", func() error {
				settle(ctx, silentBeforeRelease(r.env))
				return release()
			})
		}))
}

// queueScenario builds one of the two: fault silences the victim, calling
// release (the holder's release) once the victim is dead or frozen.
//
// The verdict is the checker's: the span of one TTL from the holder's
// release is a window in which the lock must grant (checker.Window in
// Env.Available); no grant there makes the run stuck, however soon after
// the lock recovers. A lock that waits out the dead waiter's session or a
// fixed per-waiter timeout (Redisson's fair lock: 5 s) longer than a TTL
// fails it.
func queueScenario(name, summary string, fault func(ctx context.Context, r *faultRun, release func() error) error) Scenario {
	return workerScenario(name, summary,
		func(spec impls.Spec, fencing bool) error {
			if !slices.Contains(queuedLocks, spec.Name) {
				return errors.New("its waiters do not queue on the server, so a dead one holds up nobody")
			}
			if fencing {
				return errors.New("fencing changes nothing about who waits in line")
			}
			return nil
		}, nil, plan{
			edit: func(env *Env, id int, ws *WorkerSpec) {
				// Every client waits for its cue, so the line forms in a
				// known order: holder, victim, then the live waiters.
				ws.WaitForGo = true
				if id == queueHolder {
					ws.Arm = []string{failpoint.BeforeRelease}
				}
			},
			inject: func(ctx context.Context, r *faultRun) error {
				holder := r.workers[queueHolder]
				if err := holder.Go(); err != nil {
					return err
				}
				if _, err := holder.Await(ctx, "failpoint "+failpoint.BeforeRelease, 30*time.Second+5*r.env.TTL); err != nil {
					return err
				}
				// Joining a line is one request (a queue entry, a sequential
				// node) sent at once on "go": the settle is many of them.
				if err := r.victim.Go(); err != nil {
					return err
				}
				settle(ctx, queueSettle(r.env))
				for id, w := range r.workers {
					if id != 0 && id != queueHolder {
						if err := w.Go(); err != nil {
							return err
						}
					}
				}
				settle(ctx, queueSettle(r.env))
				return fault(ctx, r, func() error {
					r.mark()
					r.env.Available = append(r.env.Available, checker.Window{
						Name:  fmt.Sprintf("the TTL (%v) after the holder's release, a live waiter in line behind the silenced one", r.env.TTL),
						Start: r.faultTime, End: r.faultTime + int64(r.env.TTL),
					})
					r.env.FaultAt(fmt.Sprintf("client %d releases, client 0 silenced in line behind it", queueHolder))
					return holder.Continue()
				})
			},
			judge: func(r *faultRun, out *Outcome) error {
				// The figure beside the verdict: how long after the release
				// a client other than the silenced one first held.
				for _, e := range r.events {
					if e.Kind == lin.Acquired && e.Client != 0 && e.Time > r.faultTime {
						d := time.Duration(e.Time - r.faultTime)
						out.Figures["next-grant-ms"] = float64(d.Milliseconds())
						out.Detail = fmt.Sprintf("client %d held %v after the release", e.Client, d.Round(time.Millisecond))
						return nil
					}
				}
				out.Figures["next-grant-ms"] = -1
				return nil
			},
			// Long enough after the release (or the pause) for the checker's
			// minimum progress from the live waiters alone.
			observe: func(env *Env) time.Duration { return env.TTL + time.Second },
		})
}

// silentBeforeRelease is how long the victim lies dead or frozen in line
// before the holder releases: half a TTL, so that the verdict does not
// hinge on where in its heartbeat cycle the victim died. A ZooKeeper waiter's
// node outlives its process by the rest of its session, between two thirds
// of a timeout and a whole one plus a tick; released at once, ZooKeeper's
// next grant fell either side of one TTL from run to run (1.67 s and 2.04 s
// with a 2 s TTL), a coin toss and no verdict. Half a TTL later, a lock
// that drops a dead waiter within the TTL a lease would take passes, and
// one that waits a fixed per-waiter timeout longer than that (Redisson's
// fair lock: 5 s) still does not. The harder case, a release at the very
// moment the waiter dies, is redis-fair's own test.
func silentBeforeRelease(env *Env) time.Duration { return env.TTL / 2 }

// queueSettle is how long the scenario lets a woken client join the line.
func queueSettle(env *Env) time.Duration { return max(300*time.Millisecond, env.TTL/5) }

func settle(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
