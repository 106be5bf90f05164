package engine

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/workload"
)

// runContention is the contention workload: the run's clients, goroutines
// of this process, race for one key doing read-work-write sections; no
// faults.
func runContention(ctx context.Context, env *Env) (*Outcome, error) {
	clients, closeClients, err := env.NewClients()
	if err != nil {
		return nil, err
	}
	defer closeClients()
	res := workload.Contend(ctx, clients, env.Sections, env.AcquireBound())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env.Phase(PhaseWorkload)
	out := &Outcome{Clients: env.Clients}
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
