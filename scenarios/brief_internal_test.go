package scenarios

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/topology"
)

// Every name in make test's brief plans is one the matrix has: a renamed
// topology, scenario or cell would otherwise drop out of make test
// silently, or stay in where a plan meant to leave it.
func TestBriefPlansNameRealCells(t *testing.T) {
	cells, err := Cells(impls.All(), Names())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name())
	}
	for top, plan := range briefPlans {
		if _, err := topology.Lookup(top); err != nil {
			t.Errorf("brief plan for %s: %v", top, err)
		}
		scenarios := append(slices.Clone(plan.Only), plan.Also...)
		for s := range plan.Leave {
			scenarios = append(scenarios, s)
		}
		for _, s := range scenarios {
			if _, err := Lookup(s); err != nil {
				t.Errorf("brief plan for %s: %v", top, err)
			}
		}
		t.Run(top, func(t *testing.T) {
			for _, c := range plan.Cells {
				if !slices.Contains(names, c) {
					// This mode's matrix has no cell where the topology
					// cannot start, or whose fault needs hosts it lacks.
					SkipUnlessCellsRunHere(t, true, top)
					t.Errorf("brief plan for %s names cell %s, which the matrix does not have", top, c)
				}
			}
		})
	}
}
