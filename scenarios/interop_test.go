package scenarios_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/scenarios"
)

// TestInteroperation puts a lock of the lab and a guest that follows the same
// algorithm on the same server on one lock name at once: half the clients
// run one, half the other. The checker must find them exclusive, and each
// side must have been granted, or the run proved nothing about the two
// together. With fencing, the two sides' tokens must also be one sequence.
func TestInteroperation(t *testing.T) {
	tests := []struct {
		lab, guest string
		fencing    bool
	}{
		// Both make "_c_<guid>-lock-<seq>" children under
		// /locklab/locks/<key>, and both order them by the sequence
		// number; both tokens are the directory's czxid plus it.
		{"zookeeper", "guest:curator", false},
		{"zookeeper", "guest:curator", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s+%s/fenced=%t", tt.lab, tt.guest, tt.fencing), func(t *testing.T) {
			lab, err := impls.Lookup(tt.lab)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := impls.Lookup(tt.guest); err != nil {
				t.Fatal(err)
			}
			grants := map[string]int{}
			job := engine.Job{Name: "interop", Body: func(ctx context.Context, env *engine.Env) (*engine.Outcome, error) {
				return engine.RunScript(ctx, env, engine.Script{
					Workers: 4,
					Edit: func(env *engine.Env, id int, ws *engine.WorkerSpec) {
						if id%2 == 1 {
							ws.Impl = tt.guest
						}
					},
					Observe: func(env *engine.Env) time.Duration { return 6 * time.Second },
					Figures: func(r *engine.ScriptRun, out *engine.Outcome) error {
						for _, ev := range r.Events {
							if ev.Kind == lin.Acquired {
								grants[map[bool]string{false: tt.lab, true: tt.guest}[ev.Client%2 == 1]]++
							}
						}
						return nil
					},
				})
			}}
			out, err := engine.Run(context.Background(), job, engine.Options{
				Impl: lab, Fencing: tt.fencing, TTL: time.Second, Seed: 42, OutDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != scenarios.Safe {
				t.Fatalf("%s and %s on one lock: verdict %s, want safe (%s)", tt.lab, tt.guest, out.Verdict, out.HTML)
			}
			for _, name := range []string{tt.lab, tt.guest} {
				if grants[name] == 0 {
					t.Fatalf("%s was never granted (grants %v): the run says nothing about the two together", name, grants)
				}
			}
			t.Logf("safe; grants %v", grants)
		})
	}
}
