package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
)

func TestCheckOutDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		want string // "" when the dir is fine
	}{
		{"existing dir", root, ""},
		{"missing dirs under a writable one", filepath.Join(root, "a", "b"), ""},
		{"relative, in the working dir", "results-that-do-not-exist", ""},
		{"a regular file", file, "is not a directory"},
		{"under a regular file", filepath.Join(file, "out"), "is not a directory"},
		{"in a file system that takes no files", "/proc/locklab-out", "cannot write in /proc"},
		{"empty", "", "is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOutDir("out", tc.dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkOutDir(%q) = %v, want nil", tc.dir, err)
			case tc.want != "" && (!errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("checkOutDir(%q) = %v, want a usage error saying %q", tc.dir, err, tc.want)
			}
			if tc.dir != "" && tc.want == "" {
				if _, err := os.Stat(tc.dir); !errors.Is(err, os.ErrNotExist) && tc.dir != root {
					t.Errorf("checkOutDir made %s (%v); it must create nothing", tc.dir, err)
				}
			}
		})
	}
	// The probe file went with the check.
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("after the checks %s holds %v, want only the file", root, entries)
	}
}

// TestBadOutRefusedFirst: every command that writes results refuses an
// output directory it could not write, with a usage error (status 2),
// before any server starts and without writing anything.
func TestBadOutRefusedFirst(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "out")
	schedule := filepath.Join(parent, "some.schedule.json")
	tests := [][]string{
		{"check", "-impl", "redis-setnx-px", "-scenario", "contention", "-out", bad},
		{"check", "-schedule", schedule, "-out", bad},
		{"explore", "-impl", "redis-setnx-px", "-duration", "5s", "-out", bad},
		{"explore", "-impl", "all", "-duration", "5s", "-out", bad},
		{"matrix", "-impl", "redis-setnx-px", "-scenario", "contention", "-runs", "1", "-out", bad},
		// bench mutants exists only in a build with the mutants tag; an
		// untagged one refuses it before anything else (mutants_untagged.go).
		{"bench", "-quick", "-impl", "redis-setnx-px", "-out", bad},
		{"lessons", "-no-run", "-dir", bad},
		{"report", "-out", bad},
	}
	for _, args := range tests {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			var buf bytes.Buffer
			start := time.Now()
			err := run(context.Background(), args, &buf, &buf)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "not a directory") {
				t.Fatalf("got %v, want a usage error saying the output path is not a directory\n%s", err, buf.String())
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused after %v: work started before the check", d)
			}
			if pids := cluster.LivePIDs(); len(pids) > 0 {
				t.Errorf("servers running after the refusal: %v", pids)
			}
			entries, _ := os.ReadDir(parent)
			if len(entries) != 1 {
				t.Errorf("the refused run wrote %v beside its -out", entries)
			}
		})
	}
}

// TestExpectationsLink: the matrix report links the expectation table
// from wherever in the checkout it is published, and names it elsewhere.
func TestExpectationsLink(t *testing.T) {
	// The test runs in cmd/bench; the link is from the checkout's root.
	t.Chdir("../..")
	tests := []struct{ out, want string }{
		{"results", "[scenarios/expectations.md](../scenarios/expectations.md)"},
		{"results/topologies/zk-ensemble", "[scenarios/expectations.md](../../../scenarios/expectations.md)"},
		{t.TempDir(), "scenarios/expectations.md"},
	}
	for _, tt := range tests {
		if got := expectationsLink(tt.out); got != tt.want {
			t.Errorf("expectationsLink(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}
