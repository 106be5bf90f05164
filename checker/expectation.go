package checker

// The lab's expectation table (scenarios/expectations.md) gives each cell
// the verdict a reviewer expects of it. These functions are the only
// comparisons of a measured verdict with that table: the matrix, the
// lessons, the mutants and the benchmark all ask here.

// Expectable reports whether the expectation table may give a cell this
// verdict: one that describes the lock or its fault (safe, unsafe, stuck,
// unavailable, n/a, and not exercised, for a fault a reviewer found never
// puts the lock at risk in this cell's schedule). Inconclusive and unknown
// describe a run too short to judge or a checker that gave up, never what a
// reviewer expects of a lock.
func Expectable(v Verdict) bool {
	switch v {
	case Safe, Unsafe, Stuck, Unavailable, NotApplicable, NotExercised:
		return true
	}
	return false
}

// Agrees reports whether a measured verdict is the one the expectation
// table gives. Only the same verdict agrees: a lock expected unsafe that
// came through safe differs as much as the reverse, since either means the
// lab's account of the lock is wrong or the fault did not land.
func Agrees(expected, got Verdict) bool { return got == expected }

// MissedCounterexample reports whether a run left an expected
// counterexample unshown: the cell is expected unsafe and this run was
// not. Unsafe means a counterexample exists, not that every run finds one
// (a fault lands when the scheduler lets it), so another seed may show it.
func MissedCounterexample(expected, got Verdict) bool {
	return expected == Unsafe && got != Unsafe
}

// FailsUnexpectedly reports whether a run failed (unsafe or stuck) where
// the expectation table says the correct lock does not: the verdict moved
// from the expected one to a failure. Under a mutant this is a catch, if
// the unmutated lock passes the same cell (Caught).
func FailsUnexpectedly(expected, got Verdict) bool {
	return !Agrees(expected, got) && Failed(got)
}

// Caught reports whether a cell caught a mutant: with the mutant live the
// cell failed unexpectedly, and the same cell without the mutant did not,
// so the failure is the mutant's doing, not the cell's. unmutated is ""
// when that run could not be made, and then nothing is caught.
func Caught(expected, mutated, unmutated Verdict) bool {
	return FailsUnexpectedly(expected, mutated) && unmutated != "" && !FailsUnexpectedly(expected, unmutated)
}

// CannotCatch says why a cell with this expected verdict cannot catch a
// mutant, or "" when it can. A cell expected unsafe fails already, one
// whose fault does not reach the lock shows nothing, and one without a
// reviewed expectation has nothing to move from.
func CannotCatch(expected Verdict) string {
	switch expected {
	case Unsafe:
		return "expected unsafe already"
	case NotApplicable:
		return "the fault does not reach the lock"
	case NotExercised:
		return "the fault never puts the lock at risk in this schedule"
	case "", Unknown:
		return "no expectation"
	}
	return ""
}

// Survived reports whether a lock came through a fault scenario: only a
// safe verdict counts. Unavailable (expected of a consistent lock under a
// lost quorum), inconclusive and n/a are not survival, and neither is any
// failure.
func Survived(v Verdict) bool { return v == Safe }
