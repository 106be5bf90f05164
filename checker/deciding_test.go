package checker

import "testing"

func TestDecidingRun(t *testing.T) {
	tests := []struct {
		name string
		cell Verdict
		runs []Verdict
		want int
	}{
		{"the first counterexample", Unsafe, []Verdict{Safe, Unsafe, Unsafe}, 1},
		{"a safe cell's first safe run", Safe, []Verdict{NotExercised, Safe, Safe}, 1},
		{"a not-exercised cell's first such run", NotExercised, []Verdict{Safe, NotExercised, NotExercised}, 1},
		{"every run n/a", NotApplicable, []Verdict{NotApplicable, NotApplicable}, 0},
		{"no run gave it", Unsafe, []Verdict{Safe, Safe}, -1},
		{"no runs", "", nil, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecidingRun(tc.cell, tc.runs); got != tc.want {
				t.Errorf("DecidingRun(%q, %v) = %d, want %d", tc.cell, tc.runs, got, tc.want)
			}
		})
	}
}
