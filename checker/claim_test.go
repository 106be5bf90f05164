package checker

import "testing"

func TestClaimed(t *testing.T) {
	tests := []struct {
		word string
		want Verdict
	}{
		{"safe", Safe},
		{"Unsafe", Unsafe},
		{"STUCK", Stuck},
		{"unavailable", Unavailable},
		{"inconclusive", Inconclusive},
		{"breaks", Unsafe},
		{"two holders", Unsafe},
		{"Both write", Unsafe},
		{"guarantee ends", Unsafe},
		{"unknown", ""}, // the checker's, never a claim about a lock
		{"n/a", ""},
		{"holds", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Claimed(tc.word); got != tc.want {
			t.Errorf("Claimed(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	for _, w := range ClaimWords() {
		if Claimed(w) == "" {
			t.Errorf("ClaimWords() lists %q, which claims no verdict", w)
		}
	}
}
