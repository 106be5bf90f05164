package checker

import "strings"

// Hand-written prose (the lessons) may say what a lock does under a fault,
// but only what a measured verdict shows. These are the only comparisons of
// such a claim with a measurement, and the only reading of prose as a
// verdict.

// claimWords are the words and phrases prose claims a verdict with, in the
// order a reader tries them: a verdict's own name, or the plain words the
// lessons use for a counterexample.
var claimWords = []struct {
	word    string
	verdict Verdict
}{
	{"unsafe", Unsafe},
	{"safe", Safe},
	{"stuck", Stuck},
	{"unavailable", Unavailable},
	{"inconclusive", Inconclusive},
	{"breaks", Unsafe},
	{"two holders", Unsafe},
	{"both write", Unsafe},
	{"guarantee ends", Unsafe},
}

// ClaimWords lists the words and phrases that claim a verdict (Claimed),
// for a reader of prose to find them: each is matched whole, in any case.
func ClaimWords() []string {
	out := make([]string, len(claimWords))
	for i, w := range claimWords {
		out[i] = w.word
	}
	return out
}

// Claimed returns the verdict a word or phrase of prose claims, in any
// case ("breaks" and "two holders" claim unsafe), or "" when it claims
// none.
func Claimed(word string) Verdict {
	for _, w := range claimWords {
		if strings.EqualFold(w.word, word) {
			return w.verdict
		}
	}
	return ""
}

// Confirms reports whether a measured verdict shows what a sentence claims.
// Only the verdict itself does: a run too short to judge (inconclusive),
// one whose checker timed out (unknown) or whose fault never reached the
// lock (n/a) confirms no claim, least of all "safe".
func Confirms(claimed, measured Verdict) bool {
	return claimed != "" && Applicable(measured) && measured == claimed
}

// Refutes reports whether a measured verdict shows what a sentence denies
// ("never unsafe"): the lock measured exactly the verdict the sentence says
// it cannot have.
func Refutes(denied, measured Verdict) bool { return Confirms(denied, measured) }
