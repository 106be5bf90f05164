package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestListNamesEverything(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"list"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"none", "local-mutex", "redis-setnx-px", "contention"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out.String())
		}
	}
}

// Bad input: a usage error (exit status 2) naming the valid choices, and no
// file written anywhere.
func TestBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"check", "-impl", "nope", "-scenario", "contention"}, "redis-setnx-px"},
		{[]string{"check", "-impl", "none", "-scenario", "nope"}, "contention"},
		{[]string{"check", "-impl", "none"}, "needs -impl and -scenario"},
		{[]string{"check", "-bogus"}, "flag provided but not defined"},
		{[]string{"check", "-impl", "none", "-scenario", "contention", "-clients", "0"}, "at least 1"},
		{[]string{"matrix", "-impl", "none", "-scenario", "contention", "-max-runs", "1001"}, "at most 1000"},
		{[]string{"matrix", "-impl", "none", "-scenario", "contention", "-history", "no-such-matrix.json"}, "no-such-matrix.json"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			args := tt.args
			if len(args) > 0 && args[0] == "check" {
				// Point any output at dir, so a stray file would show there.
				args = append([]string{"check", "-out", dir}, args[1:]...)
			}
			err := run(context.Background(), args, &out, &out)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error()+out.String(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("bad input wrote files: %v", entries)
			}
		})
	}
}
