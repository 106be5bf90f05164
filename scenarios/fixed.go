package scenarios

import (
	"context"

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
	job := func(spec impls.Spec) engine.Job {
		// Only called for a lock Applies accepted, for which FixedJob cannot fail.
		j, _ := engine.FixedJob(name, spec)
		return j
	}
	return Scenario{
		Name: name, Summary: summary, Schedule: name,
		Applies: func(spec impls.Spec, fencing bool) error {
			if applies != nil && !spec.Backend.InProcess {
				if err := applies(spec, fencing); err != nil {
					return err
				}
			}
			_, err := engine.FixedJob(name, spec)
			return err
		},
		Topology: func(spec impls.Spec) topology.Declaration { return job(spec).Topology },
		Run: func(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
			return job(env.Impl).Body(ctx, env)
		},
	}
}
