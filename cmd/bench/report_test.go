package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportRefusesBadInput: bad input is a usage error (exit 2) that
// says what is wrong, and leaves no site, not even a partial one.
func TestReportRefusesBadInput(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	broken := filepath.Join(root, "broken")
	other := filepath.Join(root, "other")
	for _, d := range []string{empty, broken, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(broken, "correctness.json"), []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		results, out    string
		want            string
		outMustNotExist bool
		flags           []string
	}{
		{"no matrix", empty, filepath.Join(root, "site1"), "has no correctness.json", true, nil},
		{"a matrix that does not decode", broken, filepath.Join(root, "site2"), "decode", true, nil},
		{"the site over its own results", broken, broken, "would replace the results", false, nil},
		{"the site over a dir of other files", empty, other, "not a site this command wrote", false, nil},
		// The committed results in the repository and a site in a temp dir
		// share only /, which -serve must not serve.
		{"serving a site far from its results", "../../results", filepath.Join(root, "site3"), "keep -out inside the repository", true, []string{"-serve"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r, _ := commonDir([]string{tc.out, tc.results}); len(tc.flags) > 0 && filepath.Dir(r) != r {
				t.Skipf("the temp dir and the repository share %s: the site could be served from there", r)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"report", "-results", tc.results, "-out", tc.out}, tc.flags...), &stdout, &stderr)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("report: %v, want a usage error saying %q", err, tc.want)
			}
			if _, serr := os.Stat(tc.out); tc.outMustNotExist && serr == nil {
				t.Errorf("report failed but wrote %s", tc.out)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the refused -out lost its file: %q, %v", b, err)
	}
}
