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

// Bad input to explore and to check -schedule: a usage error naming what
// is wrong, before any server starts, and no file written.
func TestExploreBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.schedule.json")
	if err := os.WriteFile(bad, []byte(`{"impl":"none","ttl":"1s","clients":4,"duration":"10s","faults":[{"at":"1s","kind":"server-pause","target":"redis-1","duration":"1s"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"explore"}, "needs -impl"},
		{[]string{"explore", "-impl", "nope"}, "redis-setnx-px"},
		{[]string{"explore", "-impl", "local-mutex"}, "share one process"},
		{[]string{"explore", "-impl", "none", "-kinds", "meteor"}, "unknown fault kind"},
		{[]string{"explore", "-impl", "none", "-fencing"}, "no fencing tokens"},
		{[]string{"explore", "-impl", "none", "-duration", "0s"}, "must be positive"},
		{[]string{"check", "-schedule", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"check", "-schedule", bad}, "does not apply"},
		{[]string{"check", "-schedule", bad, "-impl", "none"}, "drop -impl"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := t.TempDir()
			var buf bytes.Buffer
			args := append([]string{tt.args[0], "-out", out}, tt.args[1:]...)
			err := run(context.Background(), args, &buf, &buf)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("bad input wrote files: %v", entries)
			}
		})
	}
}
