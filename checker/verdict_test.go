package checker

import "testing"

func TestCellVerdict(t *testing.T) {
	tests := []struct {
		name string
		runs []Verdict
		want Verdict
	}{
		{"no runs", nil, ""},
		{"every run safe", []Verdict{Safe, Safe, Safe}, Safe},
		{"one counterexample makes the cell unsafe", []Verdict{Safe, Unsafe, Safe}, Unsafe},
		{"one inconclusive run keeps it from safe", []Verdict{Safe, Inconclusive, Safe}, Inconclusive},
		{"unsafe outranks stuck", []Verdict{Stuck, Unsafe}, Unsafe},
		{"stuck outranks unavailable", []Verdict{Unavailable, Stuck}, Stuck},
		{"unknown outranks stuck", []Verdict{Stuck, Unknown}, Unknown},
		{"n/a runs are left out", []Verdict{NotApplicable, Safe, NotApplicable}, Safe},
		{"n/a runs do not hide a counterexample", []Verdict{NotApplicable, Unsafe}, Unsafe},
		{"every run n/a", []Verdict{NotApplicable, NotApplicable}, NotApplicable},
		{"one run n/a", []Verdict{NotApplicable}, NotApplicable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CellVerdict(tc.runs); got != tc.want {
				t.Fatalf("CellVerdict(%v) = %q, want %q", tc.runs, got, tc.want)
			}
		})
	}
}

func TestFailed(t *testing.T) {
	tests := []struct {
		v    Verdict
		want bool
	}{
		{Safe, false},
		{Unsafe, true},
		{Stuck, true},
		{Unavailable, false},
		{Inconclusive, false},
		{Unknown, false},
		{NotApplicable, false},
		{"", false},
	}
	for _, tc := range tests {
		if got := Failed(tc.v); got != tc.want {
			t.Errorf("Failed(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestReproduced(t *testing.T) {
	tests := []struct {
		name     string
		original Verdict
		replays  []Verdict
		want     bool
	}{
		{"no replay", Unsafe, nil, false},
		{"the same verdict", Unsafe, []Verdict{Unsafe}, true},
		{"once in three", Stuck, []Verdict{Safe, Stuck, Safe}, true},
		{"a different failure is another defect", Unsafe, []Verdict{Stuck, Stuck}, false},
		{"every replay passed", Unsafe, []Verdict{Safe, Inconclusive}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reproduced(tc.original, tc.replays...); got != tc.want {
				t.Fatalf("Reproduced(%q, %v) = %v, want %v", tc.original, tc.replays, got, tc.want)
			}
		})
	}
}
