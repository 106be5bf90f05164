package record

import (
	"testing"

	"github.com/locklab/locklab/checker"
)

// A safe cell says how many of its runs exercised the fault, so that a
// reader never takes a fault that never bit for one the lock survived.
func TestVerdictText(t *testing.T) {
	tests := []struct {
		cell Cell
		want string
	}{
		{Cell{Verdict: checker.Safe, Runs: 3, ExercisedRuns: 3}, "safe (3 of 3 exercised)"},
		{Cell{Verdict: checker.NotExercised, Runs: 3, ExercisedRuns: 1}, "not exercised (1 of 3 exercised)"},
		{Cell{Verdict: checker.Unsafe, Runs: 3, ExercisedRuns: 2}, "unsafe"},
		{Cell{Verdict: checker.NotApplicable, Runs: 3}, "n/a"},
	}
	for _, tc := range tests {
		if got := tc.cell.VerdictText(); got != tc.want {
			t.Errorf("VerdictText(%+v) = %q, want %q", tc.cell, got, tc.want)
		}
	}
}
