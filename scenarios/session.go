package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
)

// Why it runs alone was measured in the full matrix at c458d487
// (pg-optimistic): the strike itself opens a server session; it was
// stamped 431 ms after the holder's failpoint, and the holder wrote 42 ms
// past its lease.
func init() {
	Register(alone("the holder must write within its lease a fifth of a TTL after the strike; three cells at once on two cores, the holder went on 609 ms after the strike instead of 200 and wrote past its lease, a verdict on the lab's delay", scheduleScenario(nemesis.HolderSessionEnded, checker.RiskAtStrike,
		"the lock server ends the holder's sessions (an operator's pg_terminate_backend or KILL) while it is inside "+
			"its critical section and alive; it writes a fifth of a TTL later, within its lease",
		func(spec impls.Spec, _ bool) error { return nemesis.SessionsEnd(spec) })))
}
