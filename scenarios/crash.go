package scenarios

import (
	"errors"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

func init() {
	Register(scheduleScenario("holder-crash",
		"the holder is SIGKILLed inside its critical section; measures the time until another client holds",
		nil))

	Register(scheduleScenario("crash-after-setnx",
		"the client is SIGKILLed between the steps of its acquire (right after a one-step acquire)",
		singleRedis))
}

// singleRedis applies to locks on exactly one Redis node.
func singleRedis(spec impls.Spec, _ bool) error {
	if spec.Backend.Kind != topology.Redis || spec.Backend.Need().Count() != 1 {
		return errors.New("it faults the single Redis node a lock runs on")
	}
	return nil
}
