package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
)

// TestPickSeed: explore stops at the first seed that finds the lock
// unsafe; a stuck seed (a liveness failure, which cannot show two holders
// at once) is kept while the next seeds go on looking, and the row falls
// back to the first stuck one when none finds them. The files of a row
// dropped go; the kept row's stay.
func TestPickSeed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verdicts []checker.Verdict
		want     int64   // the seed whose row is kept
		stuck    []int64 // its StuckSeeds
		tried    int
	}{
		{"unsafe at once", []checker.Verdict{checker.Unsafe, checker.Safe, checker.Safe}, 1, nil, 1},
		{"safe throughout", []checker.Verdict{checker.Safe, checker.Safe, checker.Safe}, 3, nil, 3},
		{"stuck, then unsafe", []checker.Verdict{checker.Stuck, checker.Unsafe, checker.Safe}, 2, []int64{1}, 2},
		{"stuck twice, then unsafe", []checker.Verdict{checker.Stuck, checker.Stuck, checker.Unsafe}, 3, []int64{1, 2}, 3},
		{"stuck, never unsafe", []checker.Verdict{checker.Safe, checker.Stuck, checker.Safe}, 2, nil, 3},
		{"stuck twice, never unsafe", []checker.Verdict{checker.Stuck, checker.Safe, checker.Stuck}, 1, nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			one := func(eo engine.ExploreOptions) (exploreRow, error) {
				v := tc.verdicts[eo.Seed-1]
				row := exploreRow{Impl: "x", Verdict: v, Minutes: 1, Faults: 8}
				if checker.Failed(v) {
					row.Schedule = fmt.Sprintf("x-seed%d.schedule.json", eo.Seed)
					row.History = fmt.Sprintf("x-seed%d.history.jsonl.gz", eo.Seed)
					for _, f := range row.Files() {
						if err := os.WriteFile(filepath.Join(dir, *f), nil, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				return row, nil
			}
			row, err := pickSeed(engine.ExploreOptions{Seed: 1}, len(tc.verdicts), dir, one)
			if err != nil {
				t.Fatal(err)
			}
			if len(row.Seeds) != tc.tried || row.Minutes != float64(tc.tried) || row.Faults != 8*tc.tried {
				t.Errorf("seeds %v, minutes %v, faults %d: want %d seeds tried, added up", row.Seeds, row.Minutes, row.Faults, tc.tried)
			}
			if want := tc.verdicts[tc.want-1]; row.Verdict != want {
				t.Errorf("verdict %s, want seed %d's %s", row.Verdict, tc.want, want)
			}
			if !reflect.DeepEqual(row.StuckSeeds, tc.stuck) {
				t.Errorf("stuck seeds %v, want %v", row.StuckSeeds, tc.stuck)
			}
			var kept []string
			for _, f := range row.Files() {
				kept = append(kept, *f)
			}
			left, err := filepath.Glob(filepath.Join(dir, "*"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range left {
				left[i] = filepath.Base(left[i])
			}
			if len(kept) == 0 && len(left) != 0 || len(kept) > 0 && !reflect.DeepEqual(left, []string{kept[1], kept[0]}) {
				t.Errorf("files left %v, want the kept row's %v", left, kept)
			}
			if len(kept) > 0 && kept[0] != fmt.Sprintf("x-seed%d.schedule.json", tc.want) {
				t.Errorf("the row's schedule is %s, want seed %d's", kept[0], tc.want)
			}
		})
	}
}
