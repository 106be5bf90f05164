package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// TestPagesFollowTheFigureRule: on the committed pages every figure names
// its run or is its cell's summary by the stated rule, and no command is
// shown as two runs.
func TestPagesFollowTheFigureRule(t *testing.T) {
	dir := filepath.Join("..", "docs", "lessons")
	m, err := LoadMatrix(filepath.Join("..", "results"))
	if err != nil {
		t.Fatal(err)
	}
	others, err := LoadTopologies(filepath.Join("..", "results"))
	if err != nil {
		t.Fatal(err)
	}
	m = append(m, others.Cells...)
	recs, err := loadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Pages {
		b, err := os.ReadFile(filepath.Join(dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range MatrixFigureProblems(string(b), m) {
			t.Errorf("%s: %s", p.File, msg)
		}
		for _, msg := range ProseFigureProblems(string(b), p, recs) {
			t.Errorf("%s: %s", p.File, msg)
		}
	}
	for _, msg := range DuplicateRuns(Pages, declaredRecords(recs)) {
		t.Error(msg)
	}
}

// cell is a planted matrix cell of three runs, two of which recovered.
var cell = record.Cell{Impl: "redis-setnx-px", Scenario: "holder-crash", Verdict: checker.Safe, Runs: 3,
	RecoveryMillis: []int64{964, 976}, Seeds: []int64{11, 12, 13},
	Figures: map[string]float64{"fault-ms": 1015, "recovery-ms": 976}}

func TestMatrixFigureProblems(t *testing.T) {
	table := func(rec, fig string) string {
		return "<!-- generated:figures -->\n" + MatrixFigureRule + "\n\n| implementation | scenario | fencing | verdict | expected | runs | clients | sections checked | recovery | figures |\n|---|---|---|---|---|---|---|---|---|---|\n" +
			"| `redis-setnx-px` | `holder-crash` | no | safe | safe | 3 | – | 274 | " + rec + " | " + fig + " |\n<!-- /generated -->"
	}
	good := "last run (seed 13): fault-ms 1015, recovery-ms 976"
	tests := []struct {
		name, page, want string
	}{
		{"by the rule", table("964, 976 ms (2 of 3 runs)", good), ""},
		// Lesson 2 before this rule: the first run's recovery beside the last run's figures.
		{"the first run's recovery", table("964 ms", good), "neither a named run's nor the rule's summary"},
		{"figures naming no run", table("964, 976 ms (2 of 3 runs)", "fault-ms 1015, recovery-ms 976"), "name no run"},
		{"a seed not the last run's", table("964, 976 ms (2 of 3 runs)", "last run (seed 11): fault-ms 1015, recovery-ms 976"), "not the cell's last run"},
		{"a value not the run's", table("964, 976 ms (2 of 3 runs)", "last run (seed 13): fault-ms 1015, recovery-ms 964"), "recovery-ms 964 is not the run's"},
		{"the rule unstated", strings.Replace(table("964, 976 ms (2 of 3 runs)", good), MatrixFigureRule, "", 1), "does not state the rule"},
		// A row on another topology is held to that topology's cell, which
		// the planted matrix does not have.
		{"a cell of another topology", strings.Replace(table("964, 976 ms (2 of 3 runs)", good), "| `redis-setnx-px` |", "| `redis-setnx-px` on `redis-sentinel` |", 1),
			"redis-setnx-px on redis-sentinel under holder-crash (fencing false): the page quotes a cell the matrix does not hold"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MatrixFigureProblems(tc.page, Matrix{cell})
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("found %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("got %q, want one problem containing %q", got, tc.want)
			}
		})
	}
}

func TestDecisionRecoveryIsTheMedianOfSafeCells(t *testing.T) {
	tests := []struct {
		name string
		c    record.Cell
		want int64
		ok   bool
	}{
		{"odd count", record.Cell{Verdict: checker.Safe, RecoveryMillis: []int64{976, 964, 990}}, 976, true},
		{"even count: the lower middle", record.Cell{Verdict: checker.Safe, RecoveryMillis: []int64{976, 964}}, 964, true},
		// The decision page (then lesson 11) showed `none` as "unsafe (0 ms)": no lock recovers nothing.
		{"an unsafe cell shows none", record.Cell{Verdict: checker.Unsafe, RecoveryMillis: []int64{0, 0, 0}}, 0, false},
		{"no run recovered", record.Cell{Verdict: checker.Safe}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := medianRecovery(tc.c)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func onTopology(r Run, topo string) Run { r.Topology = topo; return r }

func TestDuplicateRuns(t *testing.T) {
	run := func(id string) Run {
		return Run{ID: id, Impl: "redis-setnx-px", Scenario: "coupon", Fencing: true, Seed: 1}
	}
	rec := func(id string, sold float64) Record {
		return Record{ID: id, Impl: "redis-setnx-px", Scenario: "coupon", Fencing: true, Seed: 1, TTL: "1s", Figures: map[string]float64{"sold": sold}}
	}
	tests := []struct {
		name  string
		pages []Page
		recs  map[string]Record
		want  string
	}{
		{"one run shown on two pages", []Page{{Runs: []Run{run("a")}}, {Runs: []Run{run("a")}}}, map[string]Record{"a": rec("a", 100)}, ""},
		// Lessons 6 and 14 before this rule: the fenced coupon command, two runs, two sets of figures.
		{"one command as two runs", []Page{{Runs: []Run{run("a")}}, {Runs: []Run{run("b")}}}, map[string]Record{"a": rec("a", 100), "b": rec("b", 99)}, "gives two sets of figures"},
		{"declared twice", []Page{{Runs: []Run{run("a")}}, {Runs: []Run{run("b")}}}, nil, "declared as 2 runs"},
		// Lesson 10: the same lock and scenario on another topology is another command.
		{"the same cell on two topologies", []Page{{Runs: []Run{run("a"), onTopology(run("b"), "redis-sentinel")}}}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(DuplicateRuns(tc.pages, tc.recs), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProseFigureProblems(t *testing.T) {
	p := Page{Runs: []Run{{ID: "r", Seed: 3}}}
	recs := map[string]Record{"r": {ID: "r", Seed: 3, Recovery: 976, Figures: map[string]float64{"fault-ms": 1015}}}
	tests := []struct {
		name, page, want string
	}{
		{"a run named by its seed", "The holder's crash (seed 3) was healed in 976 ms.", ""},
		{"a figure naming no run", "The lock came back in 964 ms.", "names no run"},
		{"a seed whose run does not hold it", "In seed 3 the fault lasted 999 ms.", "names no run"},
		{"a bench comparison is the bench check's", "From results/bench.json, 5146 pairs/s.", ""},
		{"a generated block is not prose", "<!-- generated:x -->\n964 ms\n<!-- /generated -->", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(ProseFigureProblems(tc.page, p, recs), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
