package site

import (
	"github.com/locklab/locklab/checker"
)

// verdictView is a verdict as a page shows it: coloured by what it is,
// beside the reviewed expectation and whether the two agree. Agreement is
// checker.Agrees, the one comparison every report asks.
type verdictView struct {
	Verdict  checker.Verdict
	Expected checker.Verdict
	Agrees   bool
}

func newVerdict(got, expected checker.Verdict) verdictView {
	return verdictView{Verdict: got, Expected: expected, Agrees: checker.Agrees(expected, got)}
}

// Class is the CSS class that colours a verdict.
func (v verdictView) Class() string { return verdictClass(v.Verdict) }

func verdictClass(v checker.Verdict) string {
	switch v {
	case checker.Safe, checker.Unsafe, checker.Stuck, checker.Unavailable, checker.Inconclusive, checker.Unknown:
		return "v-" + string(v)
	case checker.NotApplicable:
		return "v-na"
	}
	return "v-none"
}

// ExpectedView is the expectation shown as a verdict of its own colour.
func (v verdictView) ExpectedView() verdictView {
	return verdictView{Verdict: v.Expected, Expected: v.Expected, Agrees: true}
}
