package engine_test

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// Every cell of the matrix, demos included, names something the engine
// runs: a fixed schedule it can build for the cell's lock and topology,
// with the workers' workload it names beside it, or an in-process workload
// it has. A scenario naming a workload that is not there fails here by
// name, not when its cell comes up in a matrix.
func TestEveryCellHasAJob(t *testing.T) {
	var names []string
	for _, s := range scenarios.All() {
		names = append(names, s.Name)
	}
	for _, s := range scenarios.All() {
		if !s.Demo {
			continue
		}
		// Cells leaves demos out; their cells are built here alike.
		for _, spec := range impls.All() {
			if s.AppliesOn(spec, topology.SingleName, false) == nil {
				if _, err := engine.ScenarioJob(s, engine.Options{Impl: spec}); err != nil {
					t.Errorf("%s/%s: %v", spec.Name, s.Name, err)
				}
			}
		}
	}
	cells, err := scenarios.Cells(impls.All(), names)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		s, err := scenarios.Lookup(c.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.ScenarioJob(s, engine.Options{Impl: c.Impl, Topology: c.Topology, Fencing: c.Fencing}); err != nil {
			t.Errorf("%s: %v", c.Name(), err)
		}
	}
}

// A schedule scenario applies to a lock on a topology exactly when its
// other conditions hold and the engine can build its fixed schedule's job
// (FixedJob): scenarios answers from the schedule's data, without the
// engine, and the two must not drift apart. An in-process lock is refused
// in the engine's words.
func TestScheduleAppliesAsFixedJobBuilds(t *testing.T) {
	for _, s := range scenarios.All() {
		if s.Schedule == "" {
			continue
		}
		rest := s
		rest.Schedule = ""
		for _, spec := range impls.All() {
			for _, topo := range topology.All() {
				_, jobErr := engine.FixedJob(s.Schedule, spec, topo.Name)
				want := rest.AppliesOn(spec, topo.Name, false) == nil && jobErr == nil
				err := s.AppliesOn(spec, topo.Name, false)
				if got := err == nil; got != want {
					t.Errorf("%s for %s on %s: applies %v (%v), but FixedJob says %v", s.Name, spec.Name, topo.Name, got, err, jobErr)
				}
				if spec.Backend.InProcess && rest.AppliesOn(spec, topo.Name, false) == nil && (err == nil || err.Error() != engine.ErrInProcess.Error()) {
					t.Errorf("%s for in-process %s: %v, want %v", s.Name, spec.Name, err, engine.ErrInProcess)
				}
			}
		}
	}
}

// A workload runs where it was written for: an in-process workload alone,
// a workers' workload beside a schedule. A scenario that names one in the
// other place fails to build its job, by name, rather than running a
// schedule whose sections ignore it.
func TestWorkloadsRunWhereTheyBelong(t *testing.T) {
	spec, err := impls.Lookup("redis-setnx-px")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		s        scenarios.Scenario
		wantFail bool
	}{
		{"a workers' workload beside a schedule", scenarios.Scenario{Name: "x", Schedule: "coupon", Workload: "coupon-sale"}, false},
		{"a schedule alone", scenarios.Scenario{Name: "x", Schedule: "coupon"}, false},
		{"an in-process workload alone", scenarios.Scenario{Name: "x", Workload: "contention"}, false},
		{"an in-process workload beside a schedule", scenarios.Scenario{Name: "x", Schedule: "pause-past-ttl", Workload: "contention"}, true},
		{"a workers' workload alone", scenarios.Scenario{Name: "x", Workload: "coupon-sale"}, true},
		{"no workload of that name", scenarios.Scenario{Name: "x", Schedule: "pause-past-ttl", Workload: "frob"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.ScenarioJob(tt.s, engine.Options{Impl: spec})
			if (err != nil) != tt.wantFail {
				t.Fatalf("ScenarioJob: %v, want failure %v", err, tt.wantFail)
			}
			if err != nil && !strings.Contains(err.Error(), tt.s.Workload) {
				t.Fatalf("ScenarioJob: %v, which does not name the workload %q", err, tt.s.Workload)
			}
		})
	}
}
