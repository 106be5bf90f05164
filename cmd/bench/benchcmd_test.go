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
		{[]string{"-render"}, "-render"},
		{[]string{"-slices", "0"}, "-slices"},
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

// -render writes bench.md again from the bench.json beside it, measuring
// nothing: the committed report's own figures, in the current text.
func TestBenchRender(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "results", "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "bench.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"bench", "-render", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# locklab benchmark", "## Against the best peer", "## How still the figures held"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("bench.md lacks %q", want)
		}
	}
	// The committed bench.md is this rendering of the committed bench.json:
	// neither edited by hand, nor left behind a change to the report's text.
	committed, err := os.ReadFile(filepath.Join("..", "..", "results", "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(md, committed) {
		t.Errorf("results/bench.md is not bench.json rendered by this code: run `go run ./cmd/bench bench -render`")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 2 {
		t.Errorf("-render left %d files, want bench.json and bench.md", len(entries))
	}
}
