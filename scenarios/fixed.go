package scenarios

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// scheduleScenario is a scenario that is one of the nemesis's fixed
// schedules (nemesis.Fixed[name]): the same fault kinds, inject and heal
// steps, worker runner and history records as `bench explore`, landed at
// a failpoint. The engine runs it (engine.FixedJob) on the servers the
// schedule's faults need, and the checker judges it as any scenario.
// applies, if set, narrows the locks the cell is for beyond what the
// schedule itself accepts; risk is when its fault puts the lock at risk
// (Scenario.Risk).
func scheduleScenario(name string, risk checker.Risk, summary string, applies func(impls.Spec, bool) error) Scenario {
	if nemesis.Fixed[name] == nil {
		panic("scenarios: no fixed schedule " + name)
	}
	return Scenario{
		Name: name, Summary: summary, Schedule: name, Risk: risk,
		Applies: func(spec impls.Spec, fencing bool) error {
			if applies != nil && !spec.Backend.InProcess {
				if err := applies(spec, fencing); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// errInProcess is why a schedule cannot run a lock whose clients share one
// process, in engine.ErrInProcess's words.
var errInProcess = errors.New("clients share one process, so no client fault applies and no worker can run it")

// scheduleApplies returns nil when the fixed schedule name can run for
// spec on the named topology, or the reason it cannot: what
// engine.FixedJob refuses before it builds the schedule's job, asked of
// the schedule's own data (a test holds the two to the same answer for
// every scenario, lock and topology).
func scheduleApplies(name string, spec impls.Spec, topo string) error {
	f, ok := nemesis.Fixed[name]
	if !ok {
		return fmt.Errorf("unknown fixed schedule %q; valid: %v", name, nemesis.FixedNames())
	}
	if spec.Backend.InProcess {
		return errInProcess
	}
	// Fencing is the caller's to ask for; the schedule checks the rest.
	s := f(spec.Name, false, time.Second, checker.Bound(time.Second))
	s.Topology = topo
	if err := s.Validate(); err != nil {
		return err
	}
	// The lock's servers on the topology, which the schedule's faults
	// only add to (engine.ScheduleTopology).
	named, err := topology.Lookup(topo)
	if err != nil {
		return err
	}
	_, err = spec.Backend.On(named)
	return err
}
