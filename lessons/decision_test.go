package lessons

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/scenarios"
)

// TestDecisionPageIsLastAndGenerated: the decision page closes the reading
// order, and its table is exactly what the committed matrix, runs and
// benchmark give (a hand edit, or a matrix grown since, fails until `bench
// lessons -no-run` rewrites it).
func TestDecisionPageIsLastAndGenerated(t *testing.T) {
	last := Pages[len(Pages)-1]
	if last.File != DecisionPage {
		t.Fatalf("the last page is %s; the decision page %s must close the reading order", last.File, DecisionPage)
	}
	if !strings.HasPrefix(last.File, fmt.Sprintf("%02d-", len(Pages))) {
		t.Errorf("%s is page %d: its file name must say so", last.File, len(Pages))
	}
	dir, res := filepath.Join("..", "docs", "lessons"), filepath.Join("..", "results")
	m, mErr := LoadMatrix(res)
	recs, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, bErr := LoadBench(res)
	want := decisionTable(m, mErr, MatrixSettings(m, res), recs, b, bErr)
	page, err := os.ReadFile(filepath.Join(dir, DecisionPage))
	if err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`(?s)<!-- generated:decision -->\n(.*?)\n<!-- /generated -->`).FindSubmatch(page)
	if got == nil || string(got[1]) != strings.TrimSpace(want) {
		t.Errorf("the decision table on %s is not what the results give: run `go run ./cmd/bench lessons -no-run`", DecisionPage)
	}
}

// TestDecisionTableGrowsFromTheData: a scenario no family claims gets a
// column of its own, a topology other than the single server gets rows of
// its own, a family is the worst of its scenarios, and the coupon sale,
// which the matrix has no column for, comes from a page's run.
func TestDecisionTableGrowsFromTheData(t *testing.T) {
	m := Matrix{
		{Impl: "redis-setnx-px", Scenario: "holder-crash", Verdict: checker.Safe, RecoveryMillis: []int64{960, 970, 980}},
		{Impl: "redis-setnx-px", Scenario: "crash-after-setnx", Verdict: checker.Safe},
		{Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Fencing: true, Verdict: checker.Safe},
		{Impl: "redis-setnx-px", Scenario: "server-restart", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Scenario: "redis-failover", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Scenario: "disk-full", Verdict: checker.Stuck},
		{Impl: "redis-setnx-px", Topology: "sentinel", Scenario: "holder-crash", Verdict: checker.Unsafe},
	}
	recs := map[string]Record{"c": {ID: "c", Impl: "redis-setnx-px", Scenario: "coupon", Verdict: checker.Unsafe}}
	got := decisionTable(m, nil, "", recs, nil, os.ErrNotExist)
	for _, want := range []string{
		"| disk-full |",         // an unclaimed scenario's own column
		"| topology |",          // a topology other than single shows
		"| sentinel | unsafe |", // its own row: holder crash unsafe there
		"unsafe <sub>server-restart, redis-failover</sub>", // the family's worst, naming its scenarios
		"unsafe<br>fenced: safe",                           // fencing on a second line
		"unsafe <sub>lesson run</sub>",                     // the coupon sale from a page's run
		"| 970 ms |",                                       // the median recovery of the safe cell
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	for _, f := range Families {
		for _, s := range f.Scenarios {
			if _, err := scenarios.Lookup(s); err != nil {
				t.Errorf("family %q names %s: %v", f.Name, s, err)
			}
		}
	}
}

// TestSummaryTableShowsOtherTopologies: a cell of a topology other than
// the single server adds a row naming it, and the single server's row is
// unchanged by it.
func TestSummaryTableShowsOtherTopologies(t *testing.T) {
	m := Matrix{
		{Impl: "zookeeper", Scenario: "pause-past-ttl", Verdict: checker.Unsafe},
		{Impl: "zookeeper", Topology: "zk-ensemble", Scenario: "pause-past-ttl", Verdict: checker.Safe},
	}
	got := SummaryTable(m, nil, nil, "")
	for _, want := range []string{"[`zookeeper`](09-zookeeper-session-expiry.md) |", "[`zookeeper`](09-zookeeper-session-expiry.md) on `zk-ensemble` |"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if ev := MatrixEvidence(m); len(ev) != 1 || ev[0].Verdict != checker.Unsafe {
		t.Errorf("prose naming no topology is held to the single server's cell alone; evidence %+v", ev)
	}
}
