package scenarios_test

import (
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// A fast cell keeps the name (and so the shard and seed) it always had; a
// production cell's name says its profile; the production profile runs
// only on its own topologies and has no contention cell.
func TestUnderProfiles(t *testing.T) {
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal)
	zk, err := impls.Lookup("zookeeper")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := scenarios.Cells([]impls.Spec{zk}, []string{"contention", "holder-crash", "leader-isolated"})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := scenarios.UnderProfiles(cells, []string{topology.FastName})
	if err != nil {
		t.Fatal(err)
	}
	if len(fast) != len(cells) {
		t.Fatalf("fast: %d cells, want every one of %d", len(fast), len(cells))
	}
	both, err := scenarios.UnderProfiles(cells, topology.ProfileNames())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i, c := range both {
		names[c.Name()] = true
		if i < len(cells) && c.Name() != cells[i].Name() {
			t.Errorf("fast cell %d is %s, want %s in its old place", i, c.Name(), cells[i].Name())
		}
		if c.Profile == topology.ProductionName && (!topology.Production.RunsCell(c.Topology, c.Scenario) || c.Scenario == "contention") {
			t.Errorf("production runs %s", c.Name())
		}
	}
	for _, want := range []string{"zookeeper/holder-crash", "zookeeper@zk-ensemble/leader-isolated",
		"zookeeper@zk-ensemble/leader-isolated~production", "zookeeper@zk-ensemble/leader-isolated/fenced~production"} {
		if !names[want] {
			t.Errorf("no cell %s among %v", want, names)
		}
	}
	for _, unwanted := range []string{"zookeeper/holder-crash~production", "zookeeper@zk-ensemble/contention~production",
		"zookeeper@zk-ensemble/holder-crash~production"} {
		if names[unwanted] {
			t.Errorf("cell %s runs, and production should leave it out", unwanted)
		}
	}
	if _, err := scenarios.UnderProfiles(cells, []string{"slow"}); err == nil {
		t.Error("an unknown profile gave no error")
	}
}

// A production cell is held to its profile's row where the table has
// one, and to the default (fast) row where it has not.
func TestExpectedUnderProfile(t *testing.T) {
	tests := []struct {
		impl, topo, scenario string
		fencing              bool
		profile              string
		want                 scenarios.Verdict
	}{
		{"guest:curator", topology.ZKEnsembleName, "holder-server-cut", false, "", "unsafe"},
		{"guest:curator", topology.ZKEnsembleName, "holder-server-cut", false, topology.ProductionName, "safe"},
		// No production row: the fast one's.
		{"guest:curator", topology.ZKEnsembleName, "holder-server-cut", true, topology.ProductionName, "safe"},
		{"zookeeper", topology.ZKEnsembleName, "holder-crash", false, topology.ProductionName, "safe"},
	}
	for _, tt := range tests {
		e, err := scenarios.ExpectedUnder(tt.profile, tt.impl, tt.topo, tt.scenario, tt.fencing)
		if err != nil {
			t.Fatal(err)
		}
		if e.Verdict != tt.want {
			t.Errorf("%s@%s/%s fenced %v under %q: %s, want %s", tt.impl, tt.topo, tt.scenario, tt.fencing, tt.profile, e.Verdict, tt.want)
		}
	}
}
