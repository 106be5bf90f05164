package scenarios

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
)

func init() {
	Register(workerScenario("holder-crash",
		"the holder is SIGKILLed inside its critical section; measures the time until another client holds",
		nil, nil, plan{
			trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
			inject: func(ctx context.Context, r *faultRun) error {
				r.mark()
				r.victim.Kill(" (holding the lock)")
				return nil
			},
			recovery: true,
			observe:  func(*Env) time.Duration { return time.Second },
		}))

	Register(workerScenario("crash-after-setnx",
		"the client is SIGKILLed between the steps of its acquire (right after a one-step acquire)",
		singleRedis, nil, plan{
			trigger: failpointOr(failpoint.AfterSetNX, failpoint.AfterAcquire),
			inject: func(ctx context.Context, r *faultRun) error {
				r.mark()
				r.victim.Kill(" (mid-acquire)")
				return nil
			},
			recovery: true,
			observe:  func(*Env) time.Duration { return time.Second },
		}))
}

// singleRedis applies to locks on exactly one Redis node.
func singleRedis(spec impls.Spec, _ bool) error {
	if spec.Backend.RedisNodes != 1 {
		return errors.New("it faults the single Redis node a lock runs on")
	}
	return nil
}
