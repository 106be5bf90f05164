package nemesis

import (
	"testing"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
)

// Every schedule opens at the holder's failpoint, and consecutive seeds
// take the kinds that can strike there in turn: as many seeds as kinds
// open once with each, so a pause past the lease is among the first few
// seeds of any lock that can be paused.
func TestGenerateOpensAtTheHolderInTurn(t *testing.T) {
	for _, impl := range []string{"etcd-lock", "redis-setnx-px", "pg-advisory"} {
		t.Run(impl, func(t *testing.T) {
			t.Setenv("LOCKLAB_SERVERS", "local")
			p := plan(t, impl, 1, time.Minute)
			spec, _ := impls.Lookup(impl)
			var openers []string
			for _, k := range p.Kinds {
				if len(heldSteps(spec, p.Topology, k, 2*time.Second)) > 0 {
					openers = append(openers, k.Name())
				}
			}
			if len(openers) < 3 {
				t.Fatalf("only %v can open at the holder", openers)
			}
			seen := map[string]bool{}
			for i := range len(openers) {
				p.Seed = int64(1 + i)
				s := Generate(p)
				first := s.Faults[0]
				if first.After != failpoint.InCriticalSection || first.At != 0 {
					t.Fatalf("seed %d opens with %+v, not at the holder's failpoint", p.Seed, first)
				}
				if first.Kind != openers[i] {
					t.Errorf("seed %d opens with %s, want %s (the seed's turn)", p.Seed, first.Kind, openers[i])
				}
				if err := s.Validate(); err != nil {
					t.Errorf("seed %d: %v", p.Seed, err)
				}
				seen[first.Kind] = true
			}
			if len(seen) != len(openers) || !seen[ClientPause] {
				t.Errorf("%d seeds opened with %d kinds (%v), want each of %v once, client-pause among them", len(openers), len(seen), seen, openers)
			}
		})
	}
}
