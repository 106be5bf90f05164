package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// RunScenario runs the scenario named name against opts.Impl on fresh
// servers of opts.Topology (Run), once the scenario says it applies there.
// The scenario is data; what it names (a fixed schedule, an in-process
// workload, a workload under a fixed schedule) is run here.
func RunScenario(ctx context.Context, name string, opts Options) (*Outcome, error) {
	s, err := scenarios.Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := s.AppliesOn(opts.Impl, opts.Topology, opts.Fencing); err != nil {
		return nil, fmt.Errorf("scenario %s does not apply to %s on %s: %w", name, opts.Impl.Name, topology.Or(opts.Topology), err)
	}
	job, err := ScenarioJob(s, opts)
	if err != nil {
		return nil, err
	}
	return Run(ctx, job, opts)
}

// ScenarioJob is the job that runs scenario s for opts.Impl on
// opts.Topology: the nemesis's fixed schedule it names (FixedJob), its
// workers' sections the workload it names beside it, if any
// (workerWorkloads[s.Workload]), or the in-process workload it names alone
// (workloads[s.Workload]), on the servers its topology declares.
func ScenarioJob(s scenarios.Scenario, opts Options) (Job, error) {
	profile, err := topology.LookupProfile(opts.Profile)
	if err != nil {
		return Job{}, err
	}
	job := Job{Name: s.Name, Risk: s.Risk, SessionLease: scenarios.SessionIdle(opts.Topology, profile)}
	switch {
	case s.Schedule != "":
		var sec sections
		if s.Workload != "" {
			var ok bool
			if sec, ok = workerWorkloads[s.Workload]; !ok {
				return Job{}, fmt.Errorf("scenario %s names the workload %q beside its schedule, and the engine has no such workload for worker processes (valid: %s)",
					s.Name, s.Workload, strings.Join(slices.Sorted(maps.Keys(workerWorkloads)), ", "))
			}
		}
		fixed, err := fixedJob(s.Schedule, opts.Impl, topology.Or(opts.Topology), sec)
		if err != nil {
			return Job{}, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		job.Topology, job.Body = fixed.Topology, fixed.Body
	case s.Workload != "":
		if _, onWorkers := workerWorkloads[s.Workload]; onWorkers {
			return Job{}, fmt.Errorf("scenario %s names the workload %q alone, which runs on a schedule's worker processes: name the schedule too", s.Name, s.Workload)
		}
		body, ok := workloads[s.Workload]
		if !ok {
			return Job{}, fmt.Errorf("scenario %s names the workload %q, which the engine does not have", s.Name, s.Workload)
		}
		job.Body = body
	default:
		return Job{}, fmt.Errorf("scenario %s names no schedule and no workload", s.Name)
	}
	return job, nil
}

// RunCell runs a cell exactly runs times, each with its own seed derived
// from base, and returns every outcome. Every cell gets the same effort,
// whatever the lab expects of it: a cell expected safe has as many chances
// to show a counterexample as one expected unsafe. The cell's verdict is
// the worst of its runs (checker.CellVerdict).
func RunCell(ctx context.Context, c scenarios.Cell, runs int, base Options) ([]*Outcome, error) {
	return RunCellWhile(ctx, c, base, func(outs []*Outcome) bool { return len(outs) < runs })
}

// RunCellWhile runs a cell one run after another for as long as more says
// the outcomes so far call for another (`bench matrix` runs a
// race-sensitive cell until its answer is stable, checker.UntilStable),
// run i with seed base.Seed+i, and returns every outcome.
func RunCellWhile(ctx context.Context, c scenarios.Cell, base Options, more func(outs []*Outcome) bool) ([]*Outcome, error) {
	var outs []*Outcome
	for i := 0; more(outs); i++ {
		o := base
		o.Impl, o.Topology, o.Profile, o.Fencing = c.Impl, c.Topology, c.Profile, c.Fencing
		o.Seed = base.Seed + int64(i)
		out, err := RunScenario(ctx, c.Scenario, o)
		if err != nil {
			return outs, fmt.Errorf("%s: %w", c.Name(), err)
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// workloads are the in-process bodies scenarios name
// (scenarios.Scenario.Workload): clients that are goroutines of this
// process, with no fault but what the workload itself does.
var workloads = map[string]func(ctx context.Context, env *Env) (*Outcome, error){
	"contention":       runContention,
	"release-hand-off": runHandOff,
	"re-entry":         runReentry,
}
