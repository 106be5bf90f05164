package checker

// Hand-written prose (the lessons) may say what a lock does under a fault,
// but only what a measured verdict shows. These are the only comparisons of
// such a claim with a measurement.

// Confirms reports whether a measured verdict shows what a sentence claims.
// Only the verdict itself does: a run too short to judge (inconclusive),
// one whose checker timed out (unknown) or whose fault never reached the
// lock (n/a) confirms no claim, least of all "safe".
func Confirms(claimed, measured Verdict) bool {
	return claimed != "" && measured != NotApplicable && measured == claimed
}

// Refutes reports whether a measured verdict shows what a sentence denies
// ("never unsafe"): the lock measured exactly the verdict the sentence says
// it cannot have.
func Refutes(denied, measured Verdict) bool { return Confirms(denied, measured) }
