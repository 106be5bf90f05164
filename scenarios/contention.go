package scenarios

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/workload"
)

func init() {
	Register(Scenario{
		Name:    "contention",
		Summary: "clients race for one key doing read-work-write critical sections; no faults",
		Run:     runContention,
	})
}

func runContention(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
	clients, closeClients, err := env.NewClients()
	if err != nil {
		return nil, err
	}
	defer closeClients()
	res := workload.Contend(ctx, clients, env.Sections, env.AcquireBound())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env.Phase(engine.PhaseWorkload)
	out := &engine.Outcome{Clients: env.Clients}
	if res.Stuck != nil {
		// The gap in grants this left is the checker's to judge.
		out.Detail = fmt.Sprintf("an acquire waited %v without the lock: %v", env.AcquireBound(), res.Stuck)
	} else if res.Failures > env.Sections/10 {
		return nil, fmt.Errorf("%d acquires failed (not contention, errors): see the servers' logs", res.Failures)
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}
