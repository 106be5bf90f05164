package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/record"
)

// TestPagesShowTheIntervalsTheyClaim: every sentence of a page that
// compares two locks on speed ("inside the noise", "faster", "ahead", "the
// difference between") has the page print both locks' 95 % intervals on
// the figure it compares, in its noise block, so a learner sees what the
// claim rests on; BenchClaimProblems holds the claim to those intervals.
func TestPagesShowTheIntervalsTheyClaim(t *testing.T) {
	for _, p := range Pages {
		b, err := os.ReadFile(filepath.Join("..", "docs", "lessons", p.File))
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range IntervalShownProblems(string(b), p) {
			t.Errorf("%s: %s", p.File, msg)
		}
	}
}

func TestIntervalShownProblems(t *testing.T) {
	const block = "\n\n<!-- generated:noise -->\n<!-- /generated -->\n"
	shown := Page{Compare: []Comparison{{A: "redis-setnx-px", B: "pg-advisory"}}}
	tests := []struct {
		name, page string
		p          Page
		want       string
	}{
		{"a comparison the page shows", "`redis-setnx-px` and `pg-advisory` are inside the noise of each other." + block, shown, ""},
		{"shown in the other order", "`pg-advisory` is slower than `redis-setnx-px` uncontended." + block, shown, ""},
		{"a comparison the page does not show", "`zookeeper` is slower than `redis-setnx-px`." + block, shown, "does not show their 95 % intervals"},
		{"a figure the comparison does not print", "`redis-setnx-px` has a faster hand-off than `pg-advisory`." + block, shown, "contended hand-off p50"},
		{"declared, but no block", "`redis-setnx-px` and `pg-advisory` are inside the noise of each other.", shown, "no <!-- generated:noise --> block"},
		{"a superlative is the decision table's", "`redis-setnx-px` is not measurably the cheapest correct lock.", Page{}, ""},
		{"no comparison", "A watchdog makes every crash recovery slower.", Page{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(IntervalShownProblems(tc.page, tc.p), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNoiseBlock: the block prints each median with its interval and
// reads the overlap as the check does, and an interval the results lack
// is computed from the stored trials.
func TestNoiseBlock(t *testing.T) {
	trials := []float64{610, 620, 600, 640, 590, 630, 605, 615, 625, 595, 635, 612}
	b := &Bench{Date: "d", Command: "c", Impls: []record.BenchResult{
		{Name: "redlock", Uncontended: &record.UncontendedR{PairsPerSec: stat(1225, 1026, 1380)}, Contended: &record.ContendedR{PairsPerSec: stat(606, 422, 682)}},
		{Name: "peer-redsync-5", Uncontended: &record.UncontendedR{PairsPerSec: stat(894, 830, 1132)},
			// no stored interval: an older report's figure, trials only
			Contended: &record.ContendedR{PairsPerSec: record.Stat{Median: 612.5, Min: 590, Max: 640, Trials: trials}}},
		{Name: "zookeeper", Uncontended: &record.UncontendedR{PairsPerSec: stat(687, 530, 756)}},
	}}
	p := Page{Compare: []Comparison{{A: "redlock", B: "peer-redsync-5"}, {A: "zookeeper", B: "redlock", Metrics: []string{"uncontended pairs/s"}}}}
	got := noiseBlock(p, b, nil)
	want := benchmark.NewStat(trials)
	for _, s := range []string{
		"| uncontended pairs/s | `redlock` | 1225 [1026–1380] | `peer-redsync-5` | 894 [830–1132] | overlap: inside the noise |",
		"| contended pairs/s | `redlock` | 606 [422–682] | `peer-redsync-5` | 612 [" + num(*want.CILo) + "–" + num(*want.CIHi) + "] | overlap: inside the noise |",
		"| uncontended pairs/s | `zookeeper` | 687 [530–756] | `redlock` | 1225 [1026–1380] | apart: `redlock` ahead |",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("block lacks %q:\n%s", s, got)
		}
	}
	if strings.Count(got, "\n| ") != 4 { // the heading and three rows
		t.Errorf("want three rows:\n%s", got)
	}
}
