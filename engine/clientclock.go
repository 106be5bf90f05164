package engine

import (
	"context"
	"fmt"
	"time"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/runner"
)

// clientClockSkew runs client 0's own clock three TTLs ahead of the
// others'. The only way the skew reaches a lock is through the client's
// clock reads (runner.ReachClockReads): a lock that never reads it is n/a.
var clientClockSkew = Script{
	Edit: func(env *Env, id int, ws *WorkerSpec) {
		longWork(env, id, ws)
		// Everyone steps back after a section, so the skewed client
		// meets locks that others hold and judges their expiry.
		ws.Think = env.TTL / 3
		if id == 0 {
			ws.ClockSkew = 3 * env.TTL
		}
	},
	Inject: func(ctx context.Context, r *ScriptRun) error {
		r.Env.Reach = runner.ReachClockReads
		r.Env.FaultAt(lin.Injection{Kind: ClientClockSkew, Target: "client-0", Clients: []int{0},
			Note: fmt.Sprintf("its clock runs %v ahead", 3*r.Env.TTL)})
		return nil
	},
	// Long enough for the checker's minimum progress with long
	// sections and think time between them.
	Observe: func(env *Env) time.Duration { return 6 * time.Second },
}

// longWork keeps holders inside their critical sections for most of the
// time they hold the lock, so a lock freed behind a holder's back lets
// another client in while the holder still works.
func longWork(env *Env, _ int, ws *WorkerSpec) {
	ws.WorkMin, ws.WorkMax = env.TTL/5, env.TTL/3
}
