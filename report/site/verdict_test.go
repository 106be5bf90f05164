package site

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
)

func TestVerdictClass(t *testing.T) {
	tests := []struct {
		v    checker.Verdict
		want string
	}{
		{checker.Safe, "v-safe"},
		{checker.Unsafe, "v-unsafe"},
		{checker.Stuck, "v-stuck"},
		{checker.Unavailable, "v-unavailable"},
		{checker.Inconclusive, "v-inconclusive"},
		{checker.NotExercised, "v-not-exercised"},
		{checker.Unknown, "v-unknown"},
		{checker.NotApplicable, "v-na"},
		{"", "v-none"},
		{"not a verdict", "v-none"},
	}
	for _, tc := range tests {
		if got := verdictClass(tc.v); got != tc.want {
			t.Errorf("verdictClass(%q) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestEveryVerdictIsStyled holds the style sheet to the checker's list, so
// a new verdict fails here by name until it has a colour.
func TestEveryVerdictIsStyled(t *testing.T) {
	css, err := templates.ReadFile("templates/style.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(checker.Verdicts(), "") {
		if class := verdictClass(v); !strings.Contains(string(css), "."+class+" ") {
			t.Errorf("verdict %q has class %s, which style.css does not define", v, class)
		}
	}
}
