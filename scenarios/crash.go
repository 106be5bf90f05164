package scenarios

import (
	"errors"
	"fmt"
	"github.com/locklab/locklab/checker"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
)

func init() {
	Register(scheduleScenario("holder-crash", checker.RiskRecovery,
		"the holder is SIGKILLed inside its critical section; measures the time until another client holds",
		nil))

	Register(scheduleScenario("crash-after-setnx", checker.RiskRecovery,
		"the client is SIGKILLed between the steps of its acquire (right after a one-step acquire)",
		singleRedis))
}

// singleRedis applies to locks whose server kind says the faults the lab
// aims at a lock's one server are cells it has shown and reviewed there
// (cluster.ServerKind.SingleServerFaults): a lock on one Redis node.
func singleRedis(spec impls.Spec, _ bool) error {
	if spec.Backend.InProcess || spec.Backend.Kind == "" {
		return errors.New("it faults the single Redis node a lock runs on")
	}
	k, err := cluster.KindOf(spec.Backend.Kind)
	if err != nil {
		return fmt.Errorf("it faults the single Redis node a lock runs on: %w", err)
	}
	return k.SingleServerFaults(spec.Backend.Need().Count())
}
