package engine_test

import (
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
