package engine_test

import (
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// Every fixed schedule the production profile runs is valid once its
// server faults are stretched to outlast the profile's fail-over and a
// lease, at the profile's TTL, as the engine stretches them (no servers:
// the schedule alone).
func TestProductionSchedulesStretchValid(t *testing.T) {
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal)
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	if cells, err = scenarios.UnderProfiles(cells, []string{topology.ProductionName}); err != nil {
		t.Fatal(err)
	}
	p := topology.Production
	stretched := 0
	for _, c := range cells {
		s, err := scenarios.Lookup(c.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		if s.Schedule == "" {
			continue
		}
		sched := nemesis.Fixed[s.Schedule](c.Impl.Name, c.Fencing, p.TTL, checker.Bound(p.TTL))
		sched.Topology = topology.Or(c.Topology)
		decl, err := engine.ScheduleTopology(c.Impl, sched)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		out := sched.Outlasting(p.FailOverOf(p.Apply(decl)) + p.TTL)
		if out.Duration != sched.Duration {
			stretched++
		}
		if err := out.Validate(); err != nil {
			t.Errorf("%s: %v", c.Name(), err)
		}
	}
	if stretched == 0 {
		t.Error("no production schedule was stretched, and Sentinel's 30 s down-after outlasts its faults")
	}
}
