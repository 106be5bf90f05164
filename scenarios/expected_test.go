package scenarios_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// TestExpectationTableCoversTheMatrix: every cell the matrix runs has a
// reviewed row, and every row names a lock and a scenario that exist, so
// the table can neither fall behind the matrix nor keep rows for cells
// that are gone.
func TestExpectationTableCoversTheMatrix(t *testing.T) {
	// The table is the matrix's in local mode, where every topology
	// starts (container mode starts no Sentinel, a subset of the cells),
	// and no server starts here, so it is judged as there, as the lessons'
	// pages are.
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal)
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	// Under every profile: a profile's row must name a cell that profile
	// runs.
	if cells, err = scenarios.UnderProfiles(cells, topology.ProfileNames()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if _, err := c.Expect(); err != nil {
			t.Error(err)
		}
	}
	rows, err := scenarios.ExpectedRows()
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, c := range cells {
		k := fmt.Sprintf("%s|%s|%s|%t", c.Impl.Name, topology.Or(c.Topology), c.Scenario, c.Fencing)
		if c.Profile != "" {
			k += "|" + c.Profile
		}
		exists[k] = true
	}
	for _, k := range rows {
		parts := strings.Split(k, "|")
		if _, err := impls.Lookup(parts[0]); err != nil {
			t.Errorf("row %s: %v", k, err)
		}
		if _, err := topology.Lookup(parts[1]); err != nil {
			t.Errorf("row %s: %v", k, err)
		}
		s, err := scenarios.Lookup(parts[2])
		if err != nil {
			t.Errorf("row %s: %v", k, err)
			continue
		}
		// A demo scenario's rows are the lessons' (it is outside the matrix).
		if !exists[k] && !s.Demo {
			t.Errorf("row %s names no cell of the matrix", k)
		}
	}
}
