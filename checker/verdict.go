// Package checker is the one place a verdict is decided: porcupine's answer
// on the critical sections of a history, and liveness (progress after each
// fault heals) from the same history, against one bound derived from the
// lease TTL. It also owns every decision made from verdicts: a cell's
// verdict from its runs', whether a run failed, whether a replay reproduced
// a failure, whether a verdict agrees with the expectation table, whether a
// mutant was caught, and what counts as surviving a fault. Workloads, the
// nemesis, the runner and the reports only record and render; they never
// conclude.
package checker

import "slices"

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
	// NotExercised: the run was otherwise safe, but its fault never put the
	// lock at risk: nobody came for the lock inside the danger window
	// (Exercised), so it shows nothing about surviving the fault. Never
	// counted as safe.
	NotExercised Verdict = "not exercised"
	// NotApplicable marks a cell whose fault cannot reach the lock.
	NotApplicable Verdict = "n/a"
)

// Verdicts lists every verdict the checker gives, from best to worst (as
// Rank orders them), then n/a, which shows nothing about the lock. A
// renderer walks this list instead of naming verdicts of its own; a string
// not in it (an empty verdict, a misspelt one in a results file) is no
// verdict at all.
func Verdicts() []Verdict {
	return []Verdict{Safe, Unavailable, NotExercised, Inconclusive, Stuck, Unknown, Unsafe, NotApplicable}
}

// Rank orders verdicts from best to worst, so a cell of several runs takes
// the worst: one counterexample makes it unsafe.
func Rank(v Verdict) int {
	switch v {
	case Safe:
		return 0
	case Unavailable:
		return 1
	case NotExercised:
		return 2
	case Inconclusive:
		return 3
	case Stuck:
		return 4
	case Unknown:
		return 5
	case Unsafe:
		return 6
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

// CellVerdict combines the verdicts of a cell's runs: the worst run's, so
// one counterexample makes the cell unsafe and one inconclusive run keeps
// it from safe. Its safe and not-exercised runs count together: they are
// safe only when a majority of them exercised the fault (Majority: at
// least one, and two of three), and not exercised otherwise. A run whose
// fault never reached the lock (n/a) shows nothing about it and is left
// out, unless every run is n/a: then the cell is not applicable. A cell of
// no runs has no verdict ("").
func CellVerdict(runs []Verdict) Verdict {
	var v Verdict
	na := len(runs) > 0
	safe, clean := 0, 0
	for _, r := range runs {
		if !Applicable(r) {
			continue
		}
		na = false
		switch r {
		case Safe:
			safe++
			clean++
		case NotExercised:
			clean++
		default:
			v = Worst(v, r)
		}
	}
	if na {
		return NotApplicable
	}
	if clean > 0 {
		if safe >= Majority(clean) {
			v = Worst(v, Safe)
		} else {
			v = Worst(v, NotExercised)
		}
	}
	return v
}

// RestsOnExercise reports whether a verdict means only as much as the
// runs whose fault put the lock at risk: safe and not exercised, the
// verdicts of clean runs, which CellVerdict tells apart by how many
// exercised the fault. A table shows that count beside them; every other
// verdict stands on its own.
func RestsOnExercise(v Verdict) bool { return v == Safe || v == NotExercised }

// Applicable reports whether a verdict says anything about the lock: every
// verdict does but n/a, whose fault never reached the lock.
func Applicable(v Verdict) bool { return v != NotApplicable }

// SafetyViolated reports whether a verdict rests on a counterexample to
// mutual exclusion (unsafe): porcupine found two holders' sections
// overlapping, and its history and the page that draws it are worth
// keeping.
func SafetyViolated(v Verdict) bool { return v == Unsafe }

// LivenessViolated reports whether a verdict says the lock stopped
// granting (stuck): no client held it within the bound after a fault
// healed or its holder died, or none while a quorum stayed reachable.
// There is no overlap to draw; the fault after which grants stopped is the
// culprit (Liveness.StuckFault). A lock that grants nothing while its
// quorum is lost is unavailable, as expected, and not this.
func LivenessViolated(v Verdict) bool { return v == Stuck }

// Failed reports whether a verdict shows the lock failing: unsafe (two
// holders at once) or stuck (no grant within the bound). Such a run is a
// counterexample worth keeping, shrinking and replaying; every other
// verdict is a pass or shows too little to tell.
func Failed(v Verdict) bool { return SafetyViolated(v) || LivenessViolated(v) }

// Reproduced reports whether any replay of a failing run's schedule gave
// the original verdict again: a replay that fails differently (stuck for
// unsafe) shows another defect, not this one.
func Reproduced(original Verdict, replays ...Verdict) bool {
	return slices.Contains(replays, original)
}
