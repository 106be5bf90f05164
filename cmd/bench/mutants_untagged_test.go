//go:build !mutants

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls/mutant"
)

// A bench built without the mutants tag holds no mutant, and says so
// rather than run the locks as written where a mutant was asked for: a
// usage error naming the tag, and nothing written.
func TestUntaggedBenchRefusesMutants(t *testing.T) {
	tests := []struct {
		name string
		env  string // LOCKLAB_MUTANT: any name; an untagged bench knows none
		args []string
	}{
		{"bench mutants", "", []string{"mutants", "-list"}},
		{"check with a mutant named", "setnx-px-no-expiry", []string{"check", "-impl", "none", "-scenario", "contention"}},
		{"matrix with a mutant named", "setnx-px-no-expiry", []string{"matrix", "-impl", "none", "-scenario", "contention"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv(mutant.EnvVar, tt.env)
			var out bytes.Buffer
			err := run(context.Background(), append(tt.args, "-out", dir), &out, &out)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), "-tags "+mutant.Tag) {
				t.Fatalf("error %q does not say to build with -tags %s", err, mutant.Tag)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("a refused run wrote files: %v", entries)
			}
		})
	}
}
