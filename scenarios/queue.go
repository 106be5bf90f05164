package scenarios

import (
	"errors"
	"github.com/locklab/locklab/checker"
	"slices"

	"github.com/locklab/locklab/impls"
)

// queuedLocks are the locks whose waiters stand in a queue on the server,
// each granted in its turn: a waiter that dies in line can hold up the ones
// behind it. Locks whose waiters race for a free lock (polling, or pub/sub
// wake-ups that all retry) have no line to block, so the scenarios do not
// apply to them.
var queuedLocks = []string{"redis-fair", "zookeeper", "peer-zk-lock"}

// The queue scenarios are the nemesis's fixed schedules of the same names
// (a queue step: see nemesis.Step.Queue). The verdict is the checker's:
// the TTL from the holder's release is a window in which the lock must
// grant; no grant there makes the run stuck, however soon after the lock
// recovers. A lock that waits out the dead waiter's session or a fixed
// per-waiter timeout longer than a TTL (Redisson's fair lock: 5 s) fails it.
func init() {
	Register(alone(queueWhy, scheduleScenario("queued-waiter-crash", checker.RiskRecovery,
		"a waiter is SIGKILLed while queued right behind the holder, which then releases; the next live waiter must hold within one TTL",
		queueApplies)))
	Register(alone(queueWhy, scheduleScenario("queued-waiter-crash-in-section", checker.RiskRecovery,
		"a waiter is SIGKILLed while queued right behind a holder that stays inside its section past the waiter's lease; "+
			"the waiter behind the dead one must not take the lock while it is still held",
		queueApplies)))
	Register(alone(queueWhy, scheduleScenario("queued-waiter-pause", checker.RiskRecovery,
		"a waiter is SIGSTOPped while queued right behind the holder, which then releases; the next live waiter must hold within one TTL",
		queueApplies)))
}

func queueApplies(spec impls.Spec, fencing bool) error {
	if !slices.Contains(queuedLocks, spec.Name) {
		return errors.New("its waiters do not queue on the server, so a dead one holds up nobody")
	}
	if fencing {
		return errors.New("fencing changes nothing about who waits in line")
	}
	return nil
}
