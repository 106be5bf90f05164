package engine

import (
	"sync"
	"time"
)

// Phase is one part of a run and the wall time it took: the matrix sums
// them per cell so a reader (and whoever speeds the matrix up) sees where
// a cell's time goes: servers started, workers started, the warm-up until
// the victim stood at its failpoint, the fault, the run after its heal,
// stopping the workers, porcupine's check, the servers' teardown.
type Phase struct {
	Name    string
	Seconds float64
}

// The phases a run reports, in the order they happen. A schedule's run
// or a scenario's own body marks the ones it has; time nobody marked before
// the check counts as PhaseRun.
const (
	PhaseServers  = "servers"  // the lock's servers and the resource, started and reset
	PhaseWorkers  = "workers"  // worker processes started, each with its lock client built
	PhaseWarmUp   = "warm-up"  // until the victim stands at its failpoint and the others go
	PhaseFault    = "fault"    // from the first injection to the last heal
	PhaseAfter    = "after"    // the run after the last heal (observe, wait for a grant)
	PhaseWorkload = "workload" // a no-fault run's clients at work (contention, hand-off)
	PhaseStop     = "stop"     // stopping the workers and merging their histories
	PhaseRun      = "run"      // whatever a body did that it did not mark
	PhaseCheck    = "check"    // the checker (porcupine and liveness)
	PhaseTeardown = "teardown" // servers stopped, run dir removed
)

// phaseClock attributes a run's wall time to phases: each mark gives the
// time since the previous mark to the phase named.
type phaseClock struct {
	mu    sync.Mutex
	last  time.Time
	spent []Phase
}

func newPhaseClock(start time.Time) *phaseClock { return &phaseClock{last: start} }

func (c *phaseClock) mark(name string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	d := now.Sub(c.last).Seconds()
	c.last = now
	for i := range c.spent {
		if c.spent[i].Name == name {
			c.spent[i].Seconds += d
			return
		}
	}
	c.spent = append(c.spent, Phase{Name: name, Seconds: d})
}

func (c *phaseClock) phases() []Phase {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Phase(nil), c.spent...)
}

// Phase ends the run's current phase, giving it the time since the
// previous one ended. Scenario bodies mark theirs; the engine marks the
// servers, the check and the teardown.
func (e *Env) Phase(name string) { e.clock.mark(name) }
