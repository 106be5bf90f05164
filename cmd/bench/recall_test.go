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

// TestRecallBadInput: a results dir with no matrix, or no explore table,
// is a usage error naming what is missing, and nothing is written.
func TestRecallBadInput(t *testing.T) {
	empty := t.TempDir()
	noExplore := t.TempDir()
	if err := os.WriteFile(filepath.Join(noExplore, "correctness.json"), []byte(`[{"impl":"none","scenario":"contention","verdict":"unsafe"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{empty, "has no correctness.json"},
		{noExplore, "has no explore table"},
	} {
		var buf bytes.Buffer
		err := run(context.Background(), []string{"recall", "-results", tt.dir}, &buf, &buf)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("recall -results %s: %v, want a usage error mentioning %q", tt.dir, err, tt.want)
		}
		if _, err := os.Stat(filepath.Join(tt.dir, "explore", "recall.md")); err == nil {
			t.Errorf("bad input wrote recall.md")
		}
	}
}
