package lessons

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDecisionRulesAreChecked: every rule of thumb on the decision page
// says something a check holds to the results, so a rule cannot tell a
// learner a lock is safer than the matrix shows it: a rule of verdicts
// makes claims the claims test reads (held to every topology there,
// ContradictionsEverywhere), a rule of speed cites the benchmark, whose
// comparisons BenchClaimProblems reads. A sentence that once passed
// unread (lesson 15's "a lock that never expires one (PostgreSQL's
// session locks) is not" broken by a pause, while pg-advisory is unsafe
// where the server ends idle sessions) now fails.
func TestDecisionRulesAreChecked(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "lessons", DecisionPage))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, para := range paragraphs(Prose(string(b))) {
		if ruleRe.MatchString(para) {
			rules = append(rules, para)
		}
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no numbered rules of thumb", DecisionPage)
	}
	for _, r := range rules {
		if len(Claims(r)) == 0 && !strings.Contains(r, "bench.json") {
			t.Errorf("rule %q claims no verdict the matrix holds and cites no benchmark", r)
		}
	}
	// The old rule, held to every topology, fails.
	ev := MatrixEvidence(Matrix{
		{Impl: "pg-advisory", Scenario: "pause-past-ttl", Verdict: "safe"},
		{Impl: "pg-advisory", Topology: "pg-idle-timeouts", Scenario: "pause-past-ttl", Verdict: "unsafe"},
	})
	if got := ContradictionsEverywhere("`pg-advisory` is never unsafe under `pause-past-ttl`.", ev, nil); len(got) != 1 {
		t.Errorf("a rule that pg-advisory is never unsafe under a pause: %q, want one problem", got)
	}
}

var ruleRe = regexp.MustCompile(`^\d+\. `)
