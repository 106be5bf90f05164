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
	job := func(spec impls.Spec, topo string) engine.Job {
		// Only called for a lock AppliesOn accepted, for which FixedJob cannot fail.
		j, _ := engine.FixedJob(name, spec, topo)
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
			return nil
		},
		Topology: func(spec impls.Spec, topo string) topology.Declaration { return job(spec, topo).Topology },
		Run: func(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
			return job(env.Impl, env.Topology).Body(ctx, env)
		},
	}
}
