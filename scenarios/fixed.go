package scenarios

import (
	"context"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// scheduleScenario is a scenario that is one of the nemesis's fixed
// schedules (nemesis.Fixed[name]): the same fault kinds, inject and heal
// steps, worker runner and history records as `bench explore`, landed at
// a failpoint. The matrix runs it on the servers Run started for the cell
// and the checker judges it as any scenario. applies, if set, narrows the
// locks the cell is for beyond what the schedule itself accepts.
func scheduleScenario(name, summary string, applies func(impls.Spec, bool) error) Scenario {
	if nemesis.Fixed[name] == nil {
		panic("scenarios: no fixed schedule " + name)
	}
	schedule := func(spec impls.Spec, fencing bool, ttl time.Duration) nemesis.Schedule {
		return nemesis.Fixed[name](spec.Name, fencing, ttl, checker.Bound(ttl))
	}
	return Scenario{
		Name: name, Summary: summary, Schedule: name,
		Applies: func(spec impls.Spec, fencing bool) error {
			if spec.Backend.InProcess {
				return engine.ErrInProcess
			}
			if applies != nil {
				if err := applies(spec, fencing); err != nil {
					return err
				}
			}
			// Fencing is the cell's to ask for; the schedule checks the rest.
			return schedule(spec, false, time.Second).Validate()
		},
		Topology: func(spec impls.Spec) topology.Declaration {
			return engine.ScheduleTopology(spec, schedule(spec, false, time.Second))
		},
		Run: func(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
			s := schedule(env.Impl, env.Fencing, env.TTL)
			s.Seed = env.Seed
			return engine.RunFixed(ctx, env, s)
		},
	}
}
