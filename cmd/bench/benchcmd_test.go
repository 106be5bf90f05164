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

// A bad bench invocation is a usage error naming the valid choices, and it
// writes no file: names are checked before any server starts.
func TestBenchBadInputWritesNothing(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-impl", "nope"}, "redis-setnx-px"},
		{[]string{"-impl", "redis-setnx-px,nope"}, "local-mutex"},
		{[]string{"-workload", "nope"}, "handoff"},
		{[]string{"-trials", "0"}, "-trials"},
		{[]string{"-clients", "1"}, "-clients"},
		{[]string{"-duration", "-1s"}, "-duration"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-compare", "/nonexistent/old.json"}, "-compare"},
		{[]string{"-with", "new.json"}, "-with needs -compare"},
		{[]string{"-verdicts", "/nonexistent/correctness.json"}, "-verdicts"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "results")
			var stdout, stderr bytes.Buffer
			args := append([]string{"bench", "-out", out}, tt.args...)
			err := run(context.Background(), args, &stdout, &stderr)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// -compare reads two reports, prints what changed beyond the noise and
// exits 0 however much changed; it runs nothing and writes nothing.
func TestBenchCompare(t *testing.T) {
	dir := t.TempDir()
	report := func(name string, trials string) string {
		p := filepath.Join(dir, name)
		body := `{"date":"d","settings":{"duration_ms":1000,"clients":8,"trials":6},"implementations":[` +
			`{"name":"redis-setnx-px","uncontended":{"pairs_per_sec":{"median":1,"trials":[` + trials + `]}}}]}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldPath := report("old.json", "100,101,99,100,102,98")
	newPath := report("new.json", "150,151,149,150,152,148")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"bench", "-compare", oldPath, "-with", newPath}, &stdout, &stderr); err != nil {
		t.Fatalf("compare: %v", err)
	}
	out := stdout.String()
	for _, want := range []string{"redis-setnx-px", "uncontended pairs/s", "+50.00%", "p=0.00", "1 of 1 figures changed beyond the noise"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("compare wrote files: %v", entries)
	}
}
