// Package checker is the one place a verdict is decided: porcupine's answer
// on the critical sections of a history, and liveness (progress after each
// fault heals) from the same history, against one bound derived from the
// lease TTL. Workloads, the nemesis and the runner only record; they never
// conclude.
package checker

// Verdict is what the checker concluded about one run (or one cell).
type Verdict string

const (
	Safe   Verdict = "safe"   // linearizable, with enough progress to mean it
	Unsafe Verdict = "unsafe" // porcupine found a counterexample
	// Stuck: no client was granted the lock within the bound after a fault
	// healed (or after the holder died), while the servers were reachable.
	Stuck Verdict = "stuck"
	// Unavailable: no grants while a quorum was lost, as expected of a
	// consistent lock; never unsafe, and grants resumed after the heal.
	Unavailable Verdict = "unavailable"
	// Inconclusive: too little progress to judge (fewer checked sections or
	// grants after the fault than the minimum). Never counted as safe.
	Inconclusive Verdict = "inconclusive"
	Unknown      Verdict = "unknown" // porcupine timed out; never reported as safe
	// NotApplicable marks a cell whose fault cannot reach the lock.
	NotApplicable Verdict = "n/a"
)

// Rank orders verdicts from best to worst, so a cell of several runs takes
// the worst: one counterexample makes it unsafe.
func Rank(v Verdict) int {
	switch v {
	case Safe:
		return 0
	case Unavailable:
		return 1
	case Inconclusive:
		return 2
	case Stuck:
		return 3
	case Unknown:
		return 4
	case Unsafe:
		return 5
	}
	return -1
}

// Worst returns the worse of two verdicts ("" counts as nothing yet).
func Worst(a, b Verdict) Verdict {
	if a == "" {
		return b
	}
	if Rank(b) > Rank(a) {
		return b
	}
	return a
}
