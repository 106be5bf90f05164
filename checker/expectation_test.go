package checker

import "testing"

func TestAgrees(t *testing.T) {
	tests := []struct {
		expected, got Verdict
		want          bool
	}{
		{Safe, Safe, true},
		{Unsafe, Unsafe, true},
		{NotApplicable, NotApplicable, true},
		{Safe, Unsafe, false},
		{Unsafe, Safe, false},
		{Safe, Inconclusive, false},
		{Unavailable, Safe, false},
	}
	for _, tc := range tests {
		if got := Agrees(tc.expected, tc.got); got != tc.want {
			t.Errorf("Agrees(expected %q, got %q) = %v, want %v", tc.expected, tc.got, got, tc.want)
		}
	}
}

func TestMissedCounterexample(t *testing.T) {
	tests := []struct {
		expected, got Verdict
		want          bool
	}{
		{Unsafe, Safe, true},
		{Unsafe, Inconclusive, true},
		{Unsafe, Stuck, true},
		{Unsafe, Unsafe, false},
		{Safe, Safe, false},
		{Safe, Unsafe, false},
		{Stuck, Safe, false},
	}
	for _, tc := range tests {
		if got := MissedCounterexample(tc.expected, tc.got); got != tc.want {
			t.Errorf("MissedCounterexample(expected %q, got %q) = %v, want %v", tc.expected, tc.got, got, tc.want)
		}
	}
}

func TestMutantCatch(t *testing.T) {
	tests := []struct {
		name                          string
		expected, mutated, unmutated  Verdict
		failsUnexpectedly, wantCaught bool
	}{
		{"safe cell turns unsafe, passes unmutated", Safe, Unsafe, Safe, true, true},
		{"safe cell turns stuck, passes unmutated", Safe, Stuck, Safe, true, true},
		{"unavailable cell turns stuck", Unavailable, Stuck, Unavailable, true, true},
		{"the cell fails unmutated too", Safe, Unsafe, Unsafe, true, false},
		{"the unmutated run could not be made", Safe, Unsafe, "", true, false},
		{"the unmutated run is inconclusive: still a catch", Safe, Stuck, Inconclusive, true, true},
		{"expected stuck, stuck: no move", Stuck, Stuck, Stuck, false, false},
		{"safe cell inconclusive: not a failure", Safe, Inconclusive, Safe, false, false},
		{"safe cell stays safe", Safe, Safe, Safe, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FailsUnexpectedly(tc.expected, tc.mutated); got != tc.failsUnexpectedly {
				t.Errorf("FailsUnexpectedly(%q, %q) = %v, want %v", tc.expected, tc.mutated, got, tc.failsUnexpectedly)
			}
			if got := Caught(tc.expected, tc.mutated, tc.unmutated); got != tc.wantCaught {
				t.Errorf("Caught(%q, %q, %q) = %v, want %v", tc.expected, tc.mutated, tc.unmutated, got, tc.wantCaught)
			}
		})
	}
}

func TestCannotCatch(t *testing.T) {
	tests := []struct {
		expected Verdict
		want     string
	}{
		{Safe, ""},
		{Stuck, ""},
		{Unavailable, ""},
		{Inconclusive, ""},
		{Unsafe, "expected unsafe already"},
		{NotApplicable, "the fault does not reach the lock"},
		{Unknown, "no expectation"},
		{"", "no expectation"},
	}
	for _, tc := range tests {
		if got := CannotCatch(tc.expected); got != tc.want {
			t.Errorf("CannotCatch(%q) = %q, want %q", tc.expected, got, tc.want)
		}
	}
}

func TestSurvived(t *testing.T) {
	tests := []struct {
		v    Verdict
		want bool
	}{
		{Safe, true},
		{Unavailable, false},
		{Inconclusive, false},
		{NotApplicable, false},
		{Unknown, false},
		{Stuck, false},
		{Unsafe, false},
	}
	for _, tc := range tests {
		if got := Survived(tc.v); got != tc.want {
			t.Errorf("Survived(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestConfirms(t *testing.T) {
	tests := []struct {
		claimed, measured Verdict
		want              bool
	}{
		{Safe, Safe, true},
		{Unsafe, Unsafe, true},
		{Stuck, Stuck, true},
		{Unavailable, Unavailable, true},
		{Safe, Unsafe, false},
		{Safe, Inconclusive, false}, // too little progress shows nothing
		{Safe, Unknown, false},
		{Safe, NotApplicable, false}, // the fault never reached the lock
		{NotApplicable, NotApplicable, false},
		{Unsafe, Stuck, false},
		{"", "", false},
	}
	for _, tc := range tests {
		if got := Confirms(tc.claimed, tc.measured); got != tc.want {
			t.Errorf("Confirms(claimed %q, measured %q) = %v, want %v", tc.claimed, tc.measured, got, tc.want)
		}
		if got := Refutes(tc.claimed, tc.measured); got != tc.want {
			t.Errorf("Refutes(denied %q, measured %q) = %v, want %v", tc.claimed, tc.measured, got, tc.want)
		}
	}
}

func TestExpectable(t *testing.T) {
	tests := []struct {
		v    Verdict
		want bool
	}{
		{Safe, true},
		{Unsafe, true},
		{Stuck, true},
		{Unavailable, true},
		{NotApplicable, true},
		{Inconclusive, false},
		{Unknown, false},
		{"", false},
		{NotExercised, true},
		{"not tested", false},
	}
	for _, tc := range tests {
		if got := Expectable(tc.v); got != tc.want {
			t.Errorf("Expectable(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
