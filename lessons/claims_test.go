package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
)

// TestProseAgreesWithRuns: on every lesson page, no hand-written sentence
// says a lock does under a fault what the committed matrix or the page's
// own runs contradict, and every generated run sentence agrees with its
// record and its timeline.
func TestProseAgreesWithRuns(t *testing.T) {
	dir := filepath.Join("..", "docs", "lessons")
	m, err := LoadMatrix(filepath.Join("..", "results"))
	if err != nil {
		t.Fatal(err)
	}
	others, err := LoadTopologies(filepath.Join("..", "results"))
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(Matrix{}, m...), others.Cells...)
	recs, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))) }
	for _, p := range Pages {
		t.Run(strings.TrimSuffix(p.File, ".md"), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, p.File))
			if err != nil {
				t.Fatal(err)
			}
			ev := append(MatrixEvidence(all), RunEvidence(p, recs)...)
			contradicted := Contradictions
			if p.EveryTopology {
				contradicted = ContradictionsEverywhere
			}
			for _, msg := range contradicted(string(b), ev, recs) {
				t.Errorf("contradicted: %s", msg)
			}
			for _, msg := range FigureProblems(string(b), recs, read) {
				t.Errorf("figure: %s", msg)
			}
		})
	}
}

// evidence is a small fixed matrix for the planted cases, so they test the
// reading of sentences, not today's verdicts.
var evidence = []Evidence{
	{Impl: "zookeeper", Scenario: "pause-past-ttl", Verdict: checker.Unsafe, Source: "matrix"},
	{Impl: "zookeeper", Scenario: "pause-past-ttl", Fencing: true, Verdict: checker.Safe, Source: "matrix"},
	{Impl: "pg-advisory", Scenario: "holder-partition", Verdict: checker.Safe, Source: "matrix"},
	{Impl: "pg-advisory", Scenario: "pause-past-ttl", Verdict: checker.Safe, Source: "matrix"},
	{Impl: "redis-setnx-px", Scenario: "redis-failover", Verdict: checker.Unsafe, Source: "matrix"},
	{Impl: "redis-setnx-px", Scenario: "redis-failover", Fencing: true, Verdict: checker.Unsafe, Source: "matrix"},
	{Impl: "redis-setnx-px", Scenario: "redis-failover", Fencing: true, Verdict: checker.Unsafe, Source: "run failover-fenced"},
	{Impl: "redis-setnx-expire", Scenario: "crash-after-setnx", Verdict: checker.Stuck, Source: "run expire-crash"},
	{Impl: "redlock", Scenario: "redlock-partition", Verdict: checker.Unavailable, Source: "matrix"},
	{Impl: "pg-optimistic", Scenario: "pause-past-ttl", Verdict: checker.Unsafe, Source: "matrix"},
}

var planted = map[string]Record{
	"failover-fenced": {ID: "failover-fenced", Impl: "redis-setnx-px", Scenario: "redis-failover", Fencing: true, Verdict: checker.Unsafe},
	"expire-crash":    {ID: "expire-crash", Impl: "redis-setnx-expire", Scenario: "crash-after-setnx", Verdict: checker.Stuck},
}

func TestContradictions(t *testing.T) {
	run := func(id string) string { return "\n<!-- generated:run:" + id + " -->\nMeasured.\n<!-- /generated -->\n" }
	tests := []struct {
		name, page string
		want       string // a substring of the one problem expected; "" for none
	}{
		{"named lock and scenario, wrong verdict", "`zookeeper` is safe under `pause-past-ttl`.", "zookeeper under pause-past-ttl is safe"},
		{"named lock and scenario, right verdict", "`zookeeper` is unsafe under `pause-past-ttl`.", ""},
		{"fenced", "With `-fencing`, `zookeeper` under `pause-past-ttl` is safe.", ""},
		{"fenced, wrong", "With `-fencing`, `redis-setnx-px` under `redis-failover` is safe.", "is safe; measured: redis-failover fenced unsafe"},
		{"a plain name and a fault word", "Under a partition the advisory lock is unsafe.", "pg-advisory under holder-partition|redlock-partition is unsafe; measured: holder-partition safe"},
		// Lesson 10 before e01ae62: the lab shows the advisory lock safe under a partition.
		{"lesson 10's old partition sentence", "A network partition between the holder and the database is where the advisory lock's guarantee ends: the server eventually drops the session.", "is unsafe; measured: holder-partition safe"},
		{"denied verdict that was measured", "`redlock` under `redlock-partition` is never unavailable.", "is not unavailable"},
		{"denied verdict that was not", "Under a partition Redlock is unavailable, never unsafe.", ""},
		{"a synonym", "The optimistic version lock is a lease, so a pause breaks it.", ""},
		{"a quoted title is no claim", `antirez's reply ("Is Redlock safe?") is about a restart.`, ""},
		{"a claim no run measures", "`zookeeper` is safe under `redis-failover`.", "no matrix cell or run of the page measures"},
		{"no fault named: not a claim", "`pg-advisory` is a safe default.", ""},
		{"no lock named and no run beside: not a claim", "Any lease is unsafe under a pause.", ""},
		// Lesson 7 before e01ae62: the sentence leading into the fenced
		// fail-over run said safe, and the run beside it is unsafe.
		{"lesson 7's old sentence about its run", "The lab expects `-fencing` to keep this safe: the resource refuses stale writes." + run("failover-fenced"), "redis-setnx-px under redis-failover is safe"},
		{"the sentence about a figure, right", run("expire-crash") + "\nThe verdict is `stuck`, not `unsafe`: nothing was written twice.\n", ""},
		{"the sentence about a figure, wrong", run("expire-crash") + "\nThe verdict is `unsafe`.\n", "redis-setnx-expire under crash-after-setnx is unsafe"},
		{"a heading ends the run's paragraph", run("expire-crash") + "\n## Next\n\nThe verdict is `unsafe`.\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Contradictions(tc.page, evidence, planted)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("found %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("got %q, want one problem containing %q", got, tc.want)
			}
		})
	}
}

func TestFigureProblems(t *testing.T) {
	rec := Record{ID: "r", Impl: "zookeeper", Scenario: "pause-past-ttl", Seed: 3, TTL: "1s", Verdict: checker.Unsafe, Expected: checker.Unsafe, SVG: "img/r.svg"}
	block := func(sentence string) string {
		return "<!-- generated:run:r -->\n" + sentence + "\n\n![t](img/r.svg)\n<!-- /generated -->"
	}
	svg := func(title string) func(string) ([]byte, error) {
		return func(string) ([]byte, error) { return []byte(`<svg><text>` + title + `</text></svg>`), nil }
	}
	good := "Measured (seed 3, TTL 1s, 4 client processes): **unsafe**. The lab expects unsafe: why."
	tests := []struct {
		name, page, title, want string
	}{
		{"agrees", block(good), "zookeeper under pause-past-ttl (seed 3): unsafe", ""},
		{"sentence disagrees with the run", block(strings.Replace(good, "**unsafe**", "**safe**", 1)), "x (seed 3): safe", "the run was seed 3, TTL 1s, unsafe"},
		{"timeline disagrees with the sentence", block(good), "x (seed 4): safe", "its timeline img/r.svg is of seed 4, safe"},
		{"a warning without a difference", block(good + " ⚠ This run differs from the expectation."), "x (seed 3): unsafe", "the warning is there"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FigureProblems(tc.page, map[string]Record{"r": rec}, svg(tc.title))
			if tc.want == "" && len(got) > 0 {
				t.Errorf("found %q", got)
			}
			if tc.want != "" && !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("got %q, want a problem containing %q", got, tc.want)
			}
		})
	}
}
