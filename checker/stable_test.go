package checker

import (
	"math"
	"slices"
	"testing"
)

func TestUntilStableTrials(t *testing.T) {
	tests := []struct {
		name string
		rule UntilStable
		want int
	}{
		{"the matrix's rule: 0.85^19 = 4.6 % < 5 % <= 0.85^18 = 5.4 %", DefaultUntilStable, 19},
		{"a race that wins every other run", UntilStable{Detect: 0.5, Miss: 0.05}, 5},
		{"an exact power is not below the miss", UntilStable{Detect: 0.5, Miss: 0.125}, 4},
		{"a certain detection needs one run", UntilStable{Detect: 1, Miss: 0.05}, 1},
		{"no detection is never trusted", UntilStable{Detect: 0, Miss: 0.05}, math.MaxInt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rule.Trials()
			if got != tc.want {
				t.Fatalf("Trials() = %d, want %d", got, tc.want)
			}
			if got == math.MaxInt || got == 1 {
				return
			}
			// The rule's own promise, checked on the number it gives.
			if p := math.Pow(1-tc.rule.Detect, float64(got)); p >= tc.rule.Miss {
				t.Errorf("(1-%g)^%d = %g, not below %g", tc.rule.Detect, got, p, tc.rule.Miss)
			}
			if p := math.Pow(1-tc.rule.Detect, float64(got-1)); p < tc.rule.Miss {
				t.Errorf("(1-%g)^%d = %g is already below %g: Trials is not the fewest", tc.rule.Detect, got-1, p, tc.rule.Miss)
			}
		})
	}
	if DefaultUntilStable.Bound <= DefaultUntilStable.Trials() {
		t.Errorf("the bound %d leaves no room above the %d trials for a run that judged nothing", DefaultUntilStable.Bound, DefaultUntilStable.Trials())
	}
}

func TestUntilStableNext(t *testing.T) {
	safe := func(n int) []Verdict { return slices.Repeat([]Verdict{Safe}, n) }
	tests := []struct {
		name  string
		runs  []Verdict
		least int
		more  bool
		stop  Stop
	}{
		{"no run yet", nil, 3, true, ""},
		{"an early counterexample still gets every cell's runs", []Verdict{Unsafe}, 3, true, ""},
		{"a counterexample once every cell's runs are done", []Verdict{Safe, Unsafe, Safe}, 3, false, StopCounterexample},
		{"a counterexample after the fixed runs", append(safe(7), Unsafe), 3, false, StopCounterexample},
		{"three safe runs prove little", safe(3), 3, true, ""},
		{"18 safe runs are one short", safe(18), 3, true, ""},
		{"19 safe runs are trusted", safe(19), 3, false, StopTrusted},
		{"a stuck run judged its sections, so it counts", append(safe(18), Stuck), 3, false, StopTrusted},
		{"stuck is not the worst: unsafe may follow", []Verdict{Stuck, Safe, Safe}, 3, true, ""},
		{"unavailable runs count", slices.Repeat([]Verdict{Unavailable}, 19), 3, false, StopTrusted},
		{"an inconclusive run does not count, so the 20th run is needed", append(safe(18), Inconclusive), 3, true, ""},
		{"the 20th run makes up for it", append(append(safe(18), Inconclusive), Safe), 3, false, StopTrusted},
		{"the bound ends runs that judged too little", append(safe(15), slices.Repeat([]Verdict{Inconclusive}, 5)...), 3, false, StopBound},
		{"n/a runs do not count", append(safe(10), slices.Repeat([]Verdict{NotApplicable}, 10)...), 3, false, StopBound},
		{"unknown runs do not count", append(safe(18), Unknown), 3, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			more, stop := DefaultUntilStable.Next(tc.runs, tc.least)
			if more != tc.more || stop != tc.stop {
				t.Fatalf("Next(%v, %d) = %v, %q, want %v, %q", tc.runs, tc.least, more, stop, tc.more, tc.stop)
			}
		})
	}
}

func TestDisagree(t *testing.T) {
	tests := []struct {
		name string
		runs []Verdict
		want bool
	}{
		{"no runs", nil, false},
		{"one run", []Verdict{Unsafe}, false},
		{"every run alike", []Verdict{Safe, Safe, Safe}, false},
		{"a counterexample in one run of three", []Verdict{Unsafe, Safe, Unsafe}, true},
		{"inconclusive beside safe (the fault's landing varied)", []Verdict{Inconclusive, Inconclusive, Safe}, true},
		{"stuck beside safe", []Verdict{Safe, Safe, Stuck}, true},
		{"n/a beside safe: whether the fault reached the lock varied", []Verdict{NotApplicable, Safe}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Disagree(tc.runs); got != tc.want {
				t.Fatalf("Disagree(%v) = %v, want %v", tc.runs, got, tc.want)
			}
		})
	}
}
