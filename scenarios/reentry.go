package scenarios

import "github.com/locklab/locklab/checker"

// re-entry runs seed 003's claim that a lock should be reentrant (and
// that its lock table is not): every section's code takes the lock again
// while it holds it. It is a lesson's figure, not a matrix column: whether a lock is reentrant is a
// property of its client's code path, which the conformance suite proves
// for every lock that declares it; what this run adds is what becomes of a
// lock that does not, taken again by its holder: it waits out its own
// lease and then leaves the outer code unprotected (unsafe), or waits for
// ever (stuck).
func init() {
	Register(Scenario{
		Risk: checker.RiskContention,
		Name: "re-entry",
		Summary: "client 0 takes the lock again inside its hold (a function that holds it calls another " +
			"that takes it), writes under the inner grant, releases it, and writes again trusting the outer one; " +
			"the other clients take the lock once per section",
		Workload: "re-entry",
		Demo:     true,
	})
}
