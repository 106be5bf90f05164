package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/workload"
)

func init() {
	Register(Scenario{
		Name:    "contention",
		Summary: "clients race for one key doing read-work-write critical sections; no faults",
		Needs:   func(impls.Spec) cluster.Needs { return cluster.Needs{} },
		Run:     runContention,
	})
}

// stuckBound is how long one acquire may wait before the run counts as
// stuck: far longer than any healthy hand-off, a few TTLs.
func (e *Env) stuckBound() time.Duration { return 5*e.TTL + 10*time.Second }

func runContention(ctx context.Context, env *Env) (*Outcome, error) {
	clients := make([]*Client, env.Clients)
	for i := range clients {
		c, err := env.NewClient(i, env.Config(i))
		if err != nil {
			for _, c := range clients[:i] {
				CloseClient(c)
			}
			return nil, err
		}
		clients[i] = c
	}
	defer func() {
		for _, c := range clients {
			CloseClient(c)
		}
	}()
	res := workload.Contend(ctx, clients, env.Sections, env.stuckBound())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Outcome{Clients: env.Clients}
	if res.Stuck != nil {
		// The gap in grants this left is the checker's to judge.
		out.Detail = fmt.Sprintf("an acquire waited %v without the lock: %v", env.stuckBound(), res.Stuck)
	} else if res.Failures > env.Sections/10 {
		return nil, fmt.Errorf("%d acquires failed (not contention, errors): see the servers' logs", res.Failures)
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}
