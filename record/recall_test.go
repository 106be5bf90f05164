package record

import (
	"testing"

	"github.com/locklab/locklab/checker"
)

func TestExploreRecall(t *testing.T) {
	cells := []Cell{
		{Impl: "a", Scenario: "pause-past-ttl", Verdict: checker.Unsafe},
		{Impl: "a", Scenario: "holder-crash", Verdict: checker.Unsafe},
		{Impl: "a", Scenario: "late-release", Verdict: checker.Safe},
		{Impl: "b", Topology: "zk-ensemble", Scenario: "leader-isolated", Verdict: checker.Unsafe},
		{Impl: "c", Scenario: "pause-past-ttl", Verdict: checker.Unsafe},
		{Impl: "d", Scenario: "pause-past-ttl", Verdict: checker.Unsafe, Fencing: true}, // fenced: not a pair
		{Impl: "e", Scenario: "pause-past-ttl", Verdict: checker.Safe},                  // never unsafe: not a pair
	}
	rows := []ExploreRow{
		{Impl: "a", Topology: "single", Verdict: checker.Safe, Seeds: []int64{1, 2}, Minutes: 4},
		{Impl: "a", Topology: "single", Verdict: checker.Unsafe, Seeds: []int64{3}, Replays: []checker.Verdict{checker.Unsafe}},
		{Impl: "b", Topology: "zk-ensemble", Verdict: checker.Safe, FaultsJudged: 5, FaultsExercised: 2},
		{Impl: "b", Topology: "zk-ensemble", Fixed: "leader-isolated", Verdict: checker.Unsafe}, // told: does not count
		{Impl: "c", Verdict: checker.Unsafe, Fenced: true},                                      // fenced: does not count
	}
	rc := ExploreRecall(cells, rows)
	if rc.Pairs != 3 || rc.Found != 1 {
		t.Fatalf("pairs %d, found %d; want 3, 1: %+v", rc.Pairs, rc.Found, rc.Rows)
	}
	want := map[string]struct {
		explored, found bool
		seeds           int
		verdict         checker.Verdict
	}{
		"a": {true, true, 3, ""},
		"b": {true, false, 1, checker.Safe},
		"c": {false, false, 0, ""},
	}
	for _, r := range rc.Rows {
		w := want[r.Impl]
		if r.Explored != w.explored || r.Found != w.found || r.Seeds != w.seeds || r.Verdict != w.verdict {
			t.Errorf("%s: explored %v found %v seeds %d verdict %q; want %+v", r.Impl, r.Explored, r.Found, r.Seeds, r.Verdict, w)
		}
	}
	if a := rc.Rows[0]; a.Impl != "a" || len(a.Scenarios) != 2 || !a.Replayed {
		t.Errorf("first row %+v: want a's two unsafe scenarios, replayed", a)
	}
	if got := rc.Ratio(); got < 0.33 || got > 0.34 {
		t.Errorf("ratio %v, want 1/3", got)
	}
}
