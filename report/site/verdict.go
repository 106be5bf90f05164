package site

import (
	"slices"
	"strings"

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

// verdictClass is "v-" and the verdict's name without the characters a
// class name cannot hold ("n/a" is v-na; a space becomes a hyphen: "not
// exercised" is v-not-exercised), for every verdict the checker
// lists (checker.Verdicts), so a new verdict gets its class without a line
// here; anything else (no verdict yet, a string no checker gave) is
// v-none.
func verdictClass(v checker.Verdict) string {
	if !slices.Contains(checker.Verdicts(), v) {
		return "v-none"
	}
	return "v-" + strings.ReplaceAll(strings.ReplaceAll(string(v), "/", ""), " ", "-")
}

// ExpectedView is the expectation shown as a verdict of its own colour.
func (v verdictView) ExpectedView() verdictView {
	return verdictView{Verdict: v.Expected, Expected: v.Expected, Agrees: true}
}
