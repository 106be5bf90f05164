package scenarios_test

import (
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenarios"
)

// Every fault a scenario's schedule uses, standing ones included, is a
// kind explore can draw for that cell's lock and topology when asked for
// it by name: the scenarios inject nothing a random schedule cannot. The
// one exception is a kind that means something only where a client stops
// at a failpoint, which no random moment gives. It starts no server.
func TestExploreDrawsEveryScenarioFault(t *testing.T) {
	onlyAtFailpoint := []string{nemesis.ClientSlowSection}
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cells {
		s, err := scenarios.Lookup(c.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		if s.Schedule == "" {
			continue
		}
		sch := nemesis.Fixed[s.Schedule](c.Impl.Name, c.Fencing, time.Second, checker.Bound(time.Second))
		for _, st := range append(slices.Clone(sch.Standing), sch.Faults...) {
			seen[st.Kind] = true
			if slices.Contains(onlyAtFailpoint, st.Kind) {
				continue
			}
			asked := []string{st.Kind}
			topo, err := nemesis.ExploreTopology(c.Impl, c.Topology, sch.Clients, asked)
			if err != nil {
				t.Errorf("%s: %v", c.Name(), err)
				continue
			}
			ks, skipped, err := nemesis.Applicable(c.Impl, topo, asked)
			if err != nil {
				t.Errorf("%s: %v", c.Name(), err)
				continue
			}
			if len(ks) != 1 {
				t.Errorf("%s: explore cannot draw its fault %s: %s", c.Name(), st.Kind, skipped[st.Kind])
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no cell of a scheduled scenario to check")
	}
}
