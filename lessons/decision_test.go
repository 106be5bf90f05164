package lessons

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/scenarios"
)

// TestDecisionPageIsLastAndGenerated: the decision page closes the reading
// order of the lessons it sums up (only the follow-ups of AfterDecision
// come after it, each a page that goes deeper into one row of its table),
// every page's file name carries its place, and its table is exactly what
// the committed matrix, runs and benchmark give (a hand edit, or a matrix
// grown since, fails until `bench lessons -no-run` rewrites it).
func TestDecisionPageIsLastAndGenerated(t *testing.T) {
	if !slices.ContainsFunc(Pages, func(p Page) bool { return p.File == GuestPage }) {
		t.Errorf("the guests' page %s is not among the pages", GuestPage)
	}
	at := slices.IndexFunc(Pages, func(p Page) bool { return p.File == DecisionPage })
	if at < 0 {
		t.Fatalf("the decision page %s is not among the pages", DecisionPage)
	}
	for _, p := range Pages[at+1:] {
		if !slices.Contains(AfterDecision, p.File) {
			t.Errorf("%s comes after the decision page %s, which must close the reading order (or the page is a follow-up of AfterDecision)", p.File, DecisionPage)
		}
	}
	for i, p := range Pages {
		if !strings.HasPrefix(p.File, fmt.Sprintf("%02d-", i+1)) {
			t.Errorf("%s is page %d: its file name must say so", p.File, i+1)
		}
	}
	dir, res := filepath.Join("..", "docs", "lessons"), filepath.Join("..", "results")
	m, mErr := LoadMatrix(res)
	recs, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, bErr := LoadBench(res)
	others, err := LoadTopologies(res)
	if err != nil {
		t.Fatal(err)
	}
	want := decisionTable(m, others, mErr, MatrixSettings(m, res), recs, b, bErr)
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
// column of its own, a production topology a column of its own (and one
// no Deployment names a column named by it), a family is the worst of its
// scenarios, the coupon sale, which the matrix has no column for, comes
// from a page's run, a not-exercised verdict carries its count, and a
// lease lock's recovery too short to be its own is marked struck late.
func TestDecisionTableGrowsFromTheData(t *testing.T) {
	m := Matrix{
		{Impl: "redis-setnx-px", Scenario: "holder-crash", Verdict: checker.Safe, TTL: "1s", RecoveryMillis: []int64{960, 970, 980}},
		{Impl: "redis-setnx-px", Scenario: "crash-after-setnx", Verdict: checker.Safe},
		{Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Fencing: true, Verdict: checker.Safe},
		{Impl: "redis-setnx-px", Scenario: "server-restart", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Scenario: "redis-failover", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Scenario: "disk-full", Verdict: checker.Stuck},
		{Impl: "redis-lua-setnx-expire", Scenario: "holder-crash", Verdict: checker.Safe, TTL: "1s", RecoveryMillis: []int64{9, 12, 7}},
		{Impl: "redis-lua-setnx-expire", Scenario: "late-release", Verdict: checker.NotExercised, Runs: 3, ExercisedRuns: 1},
	}
	others := Topologies{Cells: Matrix{
		{Impl: "redis-setnx-px", Topology: "redis-sentinel", Scenario: "holder-crash", Verdict: checker.Safe},
		{Impl: "redis-setnx-px", Topology: "redis-sentinel", Scenario: "sentinel-master-kill", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Topology: "redis-sentinel", Scenario: "sentinel-master-split", Verdict: checker.Unsafe},
		{Impl: "redis-setnx-px", Topology: "moon-base", Scenario: "contention", Verdict: checker.Safe, Runs: 3, ExercisedRuns: 3},
	}}
	recs := map[string]Record{"c": {ID: "c", Impl: "redis-setnx-px", Scenario: "coupon", Verdict: checker.Unsafe}}
	got := decisionTable(m, others, nil, "", recs, nil, os.ErrNotExist)
	for _, want := range []string{
		"| disk-full |",          // an unclaimed scenario's own column
		"| Sentinel fail-over |", // a production topology's column
		"| moon-base |",          // a topology no Deployment names: its own column
		"unsafe <sub>sentinel-master-kill, sentinel-master-split</sub>", // the topology's worst, naming its scenarios
		"safe (3 of 3 exercised)",                          // a count where the matrix carries it
		"not exercised (1 of 3 exercised)",                 // the verdict issue 44 added, with its count
		"unsafe <sub>server-restart, redis-failover</sub>", // the family's worst, naming its scenarios
		"unsafe<br>fenced: safe",                           // fencing on a second line
		"unsafe <sub>lesson run</sub>",                     // the coupon sale from a page's run
		"| 970 ms |",                                       // the median recovery of the safe cell
		"[struck late](glossary.md#danger-window): 9 ms",   // a lease lock freed before its lease could end
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| redis-sentinel |") {
		t.Errorf("a topology is a column, not a row:\n%s", got)
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
	if got := Contradictions("`zookeeper` is unsafe under `pause-past-ttl`.", MatrixEvidence(m), nil); len(got) > 0 {
		t.Errorf("prose naming no topology is held to the single server's cell alone: %q", got)
	}
	if got := Contradictions("On `zk-ensemble`, `zookeeper` is unsafe under `pause-past-ttl`.", MatrixEvidence(m), nil); len(got) != 1 {
		t.Errorf("prose naming a topology is held to its cells: %q", got)
	}
	// PostgreSQL's session lock: safe under a pause on one server, unsafe
	// where the server ends idle sessions.
	pg := MatrixEvidence(Matrix{
		{Impl: "pg-advisory", Scenario: "pause-past-ttl", Verdict: checker.Safe},
		{Impl: "pg-advisory", Topology: "pg-idle-timeouts", Scenario: "pause-past-ttl", Verdict: checker.Unsafe},
	})
	for _, sentence := range []string{"`pg-advisory` is safe under `pause-past-ttl`.", "`pg-advisory` is never unsafe under `pause-past-ttl`."} {
		if got := Contradictions(sentence, pg, nil); len(got) > 0 {
			t.Errorf("%s: a page of the single server holds it to that server's cell: %q", sentence, got)
		}
		if got := ContradictionsEverywhere(sentence, pg, nil); len(got) != 1 {
			t.Errorf("%s: on a page of every topology it must hold on every one: %q", sentence, got)
		}
	}
	if got := ContradictionsEverywhere("`pg-advisory` is safe under `pause-past-ttl` on the `single` server.", pg, nil); len(got) > 0 {
		t.Errorf("a sentence naming its topology is held to it alone: %q", got)
	}
}
