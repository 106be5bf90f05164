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
		{"one run not exercised", []Verdict{NotExercised}, NotExercised},
		{"two of three exercised is safe", []Verdict{Safe, NotExercised, Safe}, Safe},
		{"one of three exercised is not", []Verdict{NotExercised, Safe, NotExercised}, NotExercised},
		{"one of two exercised is not a majority", []Verdict{Safe, NotExercised}, NotExercised},
		{"n/a runs do not count toward the majority", []Verdict{NotApplicable, NotApplicable, Safe}, Safe},
		{"not exercised outranks unavailable", []Verdict{Unavailable, NotExercised}, NotExercised},
		{"inconclusive outranks not exercised", []Verdict{NotExercised, Inconclusive}, Inconclusive},
		{"a counterexample outranks not exercised", []Verdict{NotExercised, NotExercised, Unsafe}, Unsafe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CellVerdict(tc.runs); got != tc.want {
				t.Fatalf("CellVerdict(%v) = %q, want %q", tc.runs, got, tc.want)
			}
		})
	}
}

// TestVerdictMeanings holds every question a caller may ask of one
// verdict, so that a new verdict fails here by name until each is answered.
func TestVerdictMeanings(t *testing.T) {
	tests := []struct {
		v                                              Verdict
		failed, safety, liveness, applicable, exercise bool
	}{
		{Safe, false, false, false, true, true},
		{Unsafe, true, true, false, true, false},
		{Stuck, true, false, true, true, false},
		{Unavailable, false, false, false, true, false},
		{Inconclusive, false, false, false, true, false},
		{NotExercised, false, false, false, true, true},
		{Unknown, false, false, false, true, false},
		{NotApplicable, false, false, false, false, false},
		{"", false, false, false, true, false},
	}
	answered := map[Verdict]bool{}
	for _, tc := range tests {
		answered[tc.v] = true
		if got := Failed(tc.v); got != tc.failed {
			t.Errorf("Failed(%q) = %v, want %v", tc.v, got, tc.failed)
		}
		if got := SafetyViolated(tc.v); got != tc.safety {
			t.Errorf("SafetyViolated(%q) = %v, want %v", tc.v, got, tc.safety)
		}
		if got := LivenessViolated(tc.v); got != tc.liveness {
			t.Errorf("LivenessViolated(%q) = %v, want %v", tc.v, got, tc.liveness)
		}
		if got := Applicable(tc.v); got != tc.applicable {
			t.Errorf("Applicable(%q) = %v, want %v", tc.v, got, tc.applicable)
		}
		if got := RestsOnExercise(tc.v); got != tc.exercise {
			t.Errorf("RestsOnExercise(%q) = %v, want %v", tc.v, got, tc.exercise)
		}
	}
	for _, v := range Verdicts() {
		if !answered[v] {
			t.Errorf("verdict %q is not in this table", v)
		}
	}
}

// TestVerdicts holds the list renderers walk to Rank: best to worst, each
// once, with n/a (which has no rank) last.
func TestVerdicts(t *testing.T) {
	vs := Verdicts()
	if last := vs[len(vs)-1]; last != NotApplicable {
		t.Fatalf("Verdicts() ends with %q, want %q", last, NotApplicable)
	}
	for i, v := range vs[:len(vs)-1] {
		if Rank(v) != i {
			t.Errorf("Verdicts()[%d] = %q has rank %d, want %d", i, v, Rank(v), i)
		}
	}
	if Rank(NotApplicable) != -1 || Rank("") != -1 {
		t.Errorf("Rank(n/a) = %d, Rank(\"\") = %d, want -1 for both", Rank(NotApplicable), Rank(""))
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
