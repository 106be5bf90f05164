package scenarios

import (
	"context"
	"fmt"
	"time"

	lin "github.com/locklab/locklab/linearizability"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/runner"
)

// pastTTL is how long a scripted fault lasts: well past the lease
// (or ZooKeeper session) so that it surely expired and someone else holds.
func pastTTL(env *engine.Env) time.Duration { return env.TTL*5/2 + 500*time.Millisecond }

// longWork keeps holders inside their critical sections for most of the
// time they hold the lock, so a lock freed behind a holder's back lets
// another client in while the holder still works.
func longWork(env *engine.Env, _ int, ws *engine.WorkerSpec) {
	ws.WorkMin, ws.WorkMax = env.TTL/5, env.TTL/3
}

func init() {
	Register(scheduleScenario("pause-past-ttl",
		"the holder is SIGSTOPped after its last check and before its write, for longer than the TTL, then resumed (a GC pause, holding the lock)",
		nil))

	Register(scheduleScenario("slow-work-past-ttl",
		"the holder stays alive but works longer than the TTL in one critical section",
		nil))

	Register(scheduleScenario("late-release",
		"the holder is SIGSTOPped just before releasing, until its lease expired and another client holds; then it releases",
		nil))

	Register(workerScenario("client-clock-skew",
		"one client's own clock runs three TTLs ahead of the others'",
		nil, nil, engine.Script{
			Edit: func(env *engine.Env, id int, ws *engine.WorkerSpec) {
				longWork(env, id, ws)
				// Everyone steps back after a section, so the skewed client
				// meets locks that others hold and judges their expiry.
				ws.Think = env.TTL / 3
				if id == 0 {
					ws.ClockSkew = 3 * env.TTL
				}
			},
			Inject: func(ctx context.Context, r *engine.ScriptRun) error {
				r.Env.Reach = ReachClockReads
				r.Env.FaultAt(lin.Injection{Kind: engine.ClientClockSkew, Target: "client-0", Clients: []int{0},
					Note: fmt.Sprintf("its clock runs %v ahead", 3*r.Env.TTL)})
				return nil
			},
			// Long enough for the checker's minimum progress with long
			// sections and think time between them.
			Observe: func(env *engine.Env) time.Duration { return 6 * time.Second },
		}))
}

// ReachClockReads counts a skewed client's clock reads: the only way a
// client clock skew can reach a lock. The worker records it (runner).
const ReachClockReads = runner.ReachClockReads
