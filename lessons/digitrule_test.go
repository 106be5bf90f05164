package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// TestPagesPrintNoUnsuppliedDigit: no lesson page's hand-written prose
// holds a number that no file the page prints supplies.
func TestPagesPrintNoUnsuppliedDigit(t *testing.T) {
	dir, res := filepath.Join("..", "docs", "lessons"), filepath.Join("..", "results")
	m, err := LoadMatrix(res)
	if err != nil {
		t.Fatal(err)
	}
	others, err := LoadTopologies(res)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(Matrix{}, m...), others.Cells...)
	for _, p := range Pages {
		b, err := os.ReadFile(filepath.Join(dir, p.File))
		if err != nil {
			t.Fatal(err)
		}
		cells, names := pageCells(p, all)
		for _, msg := range DigitProblems(string(b), cells, names) {
			t.Errorf("%s: %s", p.File, msg)
		}
	}
}

// TestDigitProblems: the hand-written figures issue 47 found are caught,
// and what a digit labels passes.
func TestDigitProblems(t *testing.T) {
	block := "\n\n<!-- generated:figures -->\n| x | 3 | 4585 | 1 |\n<!-- /generated -->\n"
	ensemble := []record.Cell{{Impl: "zookeeper", Topology: "zk-ensemble", Scenario: "leader-isolated", Runs: 3,
		Verdict: checker.Unsafe, RunVerdicts: []checker.Verdict{checker.Unsafe, checker.Safe, checker.Unsafe}}}
	tests := []struct {
		name, prose, want string
	}{
		{"a count of runs the cell does not have", "It shows in some runs, not all (1 of 3 in the committed ensemble matrix).", "1 of 3"},
		{"the cell's own count", "It shows in 2 of 3 runs of the matrix.", ""},
		{"a count of the verdict named", "The cell is safe in 1 of 3 runs.", ""},
		{"a cut length no file holds", "The holder loses its servers for 2.5 TTLs and half a second.", "2.5"},
		{"a figure the page prints", "The cut lasted 4585 ms.", ""},
		{"a lesson's number", "As lessons 5 and 9 showed, and lesson 14.", ""},
		{"a version and a year", "Jepsen's 2020 analysis of etcd 3.4.3 and Redis 7.0.", ""},
		{"a node's name and a client's", "Client 0 is cut from redis-4 and redis-5.", ""},
		{"a quorum", "A majority (3 of 5) said yes.", ""},
		{"inline code", "It runs `WAIT 1 100`.", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(DigitProblems(tc.prose+block, ensemble, []string{"zookeeper", "redlock"}), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want a problem naming %q", got, tc.want)
			}
		})
	}
}
