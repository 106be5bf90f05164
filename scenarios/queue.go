package scenarios

import (
	"errors"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
)

// The queue scenarios are the nemesis's fixed schedules of the same names
// (a queue step: see nemesis.Step.Queue). The verdict is the checker's:
// the TTL from the holder's release is a window in which the lock must
// grant; no grant there makes the run stuck, however soon after the lock
// recovers. A lock that waits out the dead waiter's session or a fixed
// per-waiter timeout longer than a TTL (Redisson's fair lock: 5 s) fails it.
// queueScenarios are the scenarios registered here (make test keeps one
// lock's cell of each per server kind: leftOfSingle).
var queueScenarios = map[string]bool{
	"queued-waiter-crash": true, "queued-waiter-pause": true, "queued-waiter-crash-in-section": true,
}

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

// queueApplies: the locks whose waiters are served in turn on the server
// (impls.Capabilities.Queued), each declaring it, where a waiter that dies
// in line can hold up the ones behind it. Locks whose waiters race for a
// free lock (polling, or pub/sub wake-ups that all retry) have no line to
// block. (A list of three names here left out etcd's locks, Curator's, the
// database locks whose waiters wait in the server's lock queue, and
// redis-reentrant, whose release wakes the waiter blocked longest.)
func queueApplies(spec impls.Spec, fencing bool) error {
	if !spec.Caps.Queued {
		return errors.New("its waiters do not queue on the server, so a dead one holds up nobody")
	}
	if fencing {
		return errors.New("fencing changes nothing about who waits in line")
	}
	return nil
}
