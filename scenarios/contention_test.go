package scenarios_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

func TestMain(m *testing.M) {
	runner.MaybeRunWorker()
	// Stops every server; a lab dir left behind fails the binary.
	os.Exit(cluster.EndOfTests(m.Run()))
}

// The controls calibrate the checker: it must catch no locking at all and
// pass an in-process mutex; and the correct Redis lock must pass too.
func TestContentionCalibration(t *testing.T) {
	tests := []struct {
		impl string
		want scenarios.Verdict
	}{
		{"none", checker.Unsafe},
		{"local-mutex", checker.Safe},
		{"redis-setnx-px", checker.Safe},
	}
	for _, tt := range tests {
		t.Run(tt.impl, func(t *testing.T) {
			spec, err := impls.Lookup(tt.impl)
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.RunScenario(context.Background(), "contention", engine.Options{
				Impl: spec, Clients: 8, Sections: 2000, Seed: 42, OutDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s (%s)", out.Verdict, tt.want, out.HTML)
			}
			if out.Sections < 2000 {
				t.Fatalf("checked %d critical sections, want 2000", out.Sections)
			}
			if tt.want == checker.Unsafe {
				b, err := os.ReadFile(out.HTML)
				if err != nil {
					t.Fatalf("counterexample timeline: %v", err)
				}
				script, err := lin.TimelineScript(b)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(script, "wrote") {
					t.Fatal("timeline does not describe the critical sections")
				}
			}
			if pids := cluster.LivePIDs(); len(pids) != 0 {
				t.Fatalf("servers outlived the run: %v", pids)
			}
		})
	}
}

func TestUnknownNamesListValidOnes(t *testing.T) {
	_, err := engine.RunScenario(context.Background(), "no-such-scenario", engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "contention") {
		t.Fatalf("got %v, want an error listing the valid scenarios", err)
	}
}
