package main

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// TestUntilStableReasons: a cell runs until stable when its row names a
// race, when its runs disagreed in the earlier matrix, or when that matrix
// ran it until stable because its runs had disagreed before (so a cell
// that ever disagreed keeps running so); never because it came out unsafe
// or was expected to.
func TestUntilStableReasons(t *testing.T) {
	spec, err := impls.Lookup("zookeeper")
	if err != nil {
		t.Fatal(err)
	}
	c := scenarios.Cell{Impl: spec, Topology: topology.ZKEnsembleName, Scenario: "leader-isolated"}
	key := cellKey(spec.Name, c.Topology, c.Scenario, false, "")
	earlier := func(r record.Cell) runHistory {
		r.Impl, r.Topology, r.Scenario = spec.Name, c.Topology, c.Scenario
		return runHistory{path: "old.json", cells: map[string]record.Cell{key: r}}
	}
	v := func(vs ...checker.Verdict) []checker.Verdict { return vs }
	tests := []struct {
		name     string
		race     string
		history  runHistory
		because  string
		evidence string
	}{
		{"no race, no history", "", runHistory{}, "", ""},
		{"a race row", "the reconnect", runHistory{}, record.RaceRow, "the reconnect"},
		{"the race row wins over the history", "the reconnect", earlier(record.Cell{RunVerdicts: v(checker.Safe, checker.Unsafe)}), record.RaceRow, "the reconnect"},
		{"runs that disagreed", "", earlier(record.Cell{RunVerdicts: v(checker.Unsafe, checker.Safe, checker.Unsafe)}), record.RunsDisagreed, "unsafe, safe, unsafe in old.json"},
		{"runs that agreed on unsafe", "", earlier(record.Cell{RunVerdicts: v(checker.Unsafe, checker.Unsafe, checker.Unsafe)}), "", ""},
		{"runs that agreed, but disagreed a matrix before", "", earlier(record.Cell{RunVerdicts: v(checker.Safe, checker.Safe),
			UntilStable: &record.StableRuns{Because: record.RunsDisagreed, Evidence: "safe, unsafe in older.json"}}), record.RunsDisagreed, "safe, unsafe in older.json"},
		{"a race row since removed is not carried on", "", earlier(record.Cell{RunVerdicts: v(checker.Safe, checker.Safe),
			UntilStable: &record.StableRuns{Because: record.RaceRow, Evidence: "the reconnect"}}), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.history.untilStable(c, scenarios.Expectation{Verdict: checker.Unsafe, Race: tc.race})
			switch {
			case got == nil && tc.because == "":
			case got == nil || got.Because != tc.because || got.Evidence != tc.evidence:
				t.Fatalf("untilStable = %+v, want because %q, evidence %q", got, tc.because, tc.evidence)
			}
		})
	}
}

// TestCellRuns: how many runs a cell gets, by the verdicts its runs give,
// and what it records of why they stopped.
func TestCellRuns(t *testing.T) {
	outs := func(vs ...checker.Verdict) []*engine.Outcome {
		var o []*engine.Outcome
		for _, v := range vs {
			o = append(o, &engine.Outcome{Verdict: v})
		}
		return o
	}
	safe := slices.Repeat([]checker.Verdict{checker.Safe}, 19)
	tests := []struct {
		name      string
		sensitive bool
		maxRuns   int
		verdicts  []checker.Verdict
		more      bool
		stopped   checker.Stop
	}{
		{"a cell without a race runs the fixed runs", false, 20, safe[:2], true, ""},
		{"and stops at them", false, 20, safe[:3], false, ""},
		{"a race-sensitive one runs on past them", true, 20, safe[:3], true, ""},
		{"until a counterexample", true, 20, []checker.Verdict{checker.Safe, checker.Safe, checker.Safe, checker.Unsafe}, false, checker.StopCounterexample},
		{"or 19 runs that could have failed", true, 20, safe, false, checker.StopTrusted},
		{"or the bound", true, 5, safe[:5], false, checker.StopBound},
		{"a bound at -runs runs it as any other", true, 3, safe[:3], false, checker.StopFixed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stable *record.StableRuns
			if tc.sensitive {
				stable = &record.StableRuns{Because: record.RaceRow}
			}
			more := cellRuns(3, tc.maxRuns, stable)(outs(tc.verdicts...))
			if more != tc.more {
				t.Errorf("another run after %v: %v, want %v", tc.verdicts, more, tc.more)
			}
			if stable != nil && stable.Stopped != tc.stopped {
				t.Errorf("stopped %q, want %q", stable.Stopped, tc.stopped)
			}
		})
	}
}

// TestUntilStableCellsOfTheMatrix: on the full matrix, with the committed
// correctness.json as history, every cell whose runs disagreed there and
// every cell whose row names a race runs until stable, and no other; the
// log gives how many and the worst case's extra runs (each to the bound).
func TestUntilStableCellsOfTheMatrix(t *testing.T) {
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal) // every topology's cells, as expectations are judged
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	h, err := readRunHistory("../../"+defaultHistory, true)
	if err != nil {
		t.Fatal(err)
	}
	raced, disagreed := 0, 0
	for _, c := range cells {
		exp, err := c.Expect()
		if err != nil {
			t.Fatal(err)
		}
		got := h.untilStable(c, exp)
		before, inHistory := h.cells[cellKey(c.Impl.Name, c.Topology, c.Scenario, c.Fencing, c.Profile)]
		want := exp.Race != "" || (inHistory && (checker.Disagree(before.RunVerdicts) || before.UntilStable != nil && before.UntilStable.Because == record.RunsDisagreed))
		if (got != nil) != want {
			t.Errorf("%s: runs until stable %v, want %v", c.Name(), got != nil, want)
		}
		switch {
		case got == nil:
		case got.Because == record.RaceRow:
			raced++
		default:
			disagreed++
		}
	}
	b := checker.DefaultUntilStable.Bound
	t.Logf("of %d cells, %d run until stable (%d by a race row, %d by runs that disagreed in %s): at most %d runs more than 3 each (%d in all)",
		len(cells), raced+disagreed, raced, disagreed, defaultHistory, b-3, (raced+disagreed)*(b-3))
}
