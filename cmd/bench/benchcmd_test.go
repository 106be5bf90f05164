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
