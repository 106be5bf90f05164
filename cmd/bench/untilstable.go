package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// defaultHistory is the matrix `bench matrix` reads for cells whose runs
// disagreed: the committed one, which the next full matrix replaces.
const defaultHistory = "results/correctness.json"

// historyFlag is -history: the earlier matrix whose disagreeing cells run
// until stable.
func historyFlag(fs *flag.FlagSet) *string {
	return fs.String("history", defaultHistory, "an earlier matrix's correctness.json: a cell whose runs disagreed there (or ran until stable for that) runs until its answer is stable, as a cell whose expectation row names a race does (scenarios/races.md); empty for none")
}

// maxRunsFlag is -max-runs: the bound of a race-sensitive cell's runs.
func maxRunsFlag(fs *flag.FlagSet) *int {
	return fs.Int("max-runs", checker.DefaultUntilStable.Bound, fmt.Sprintf(
		"most runs of a race-sensitive cell, which runs until a run is unsafe or %d runs could have shown a counterexample and none did (checker.UntilStable: a counterexample showing in %.0f %% of runs is then missed with a chance below %.0f %%); at most -runs runs every cell the same",
		checker.DefaultUntilStable.Trials(), 100*checker.DefaultUntilStable.Detect, 100*checker.DefaultUntilStable.Miss))
}

// runHistory is an earlier matrix's cells by cellKey.
type runHistory struct {
	path  string
	cells map[string]record.Cell
}

// cellKey names a cell the same in the matrix being run and in an earlier
// one's correctness.json.
func cellKey(impl, topo, scenario string, fencing bool, profile string) string {
	k := fmt.Sprintf("%s|%s|%s|%t", impl, topology.Or(topo), scenario, fencing)
	if p := topology.OrFast(profile); p != topology.FastName {
		k += "|" + p
	}
	return k
}

// readRunHistory reads an earlier matrix's correctness.json. A path the
// user named must exist; the default may not (a checkout without results,
// a run from another directory), and then there is no history.
func readRunHistory(path string, named bool) (runHistory, error) {
	h := runHistory{path: path, cells: map[string]record.Cell{}}
	if path == "" {
		return h, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !named {
		return h, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("%w: -history: %v", errUsage, err)
	}
	if err != nil {
		return h, fmt.Errorf("-history: %w", err)
	}
	var cells []record.Cell
	if err := json.Unmarshal(data, &cells); err != nil {
		return h, fmt.Errorf("-history %s: %w", path, err)
	}
	for _, c := range cells {
		h.cells[cellKey(c.Impl, c.Topology, c.Scenario, c.Fencing, c.Profile)] = c
	}
	return h, nil
}

// untilStable says why a cell runs until its answer is stable: its
// expectation row names a race, or its runs disagreed in the earlier
// matrix, or they did in one before it (the earlier one ran it until
// stable for that, and the reason is carried on, so a cell that ever
// disagreed keeps running so). nil: the cell runs the fixed runs.
func (h runHistory) untilStable(c scenarios.Cell, exp scenarios.Expectation) *record.StableRuns {
	if exp.Race != "" {
		return &record.StableRuns{Because: record.RaceRow, Evidence: exp.Race}
	}
	before, ok := h.cells[cellKey(c.Impl.Name, c.Topology, c.Scenario, c.Fencing, c.Profile)]
	if !ok {
		return nil
	}
	if checker.Disagree(before.RunVerdicts) {
		var vs []string
		for _, v := range before.RunVerdicts {
			vs = append(vs, string(v))
		}
		return &record.StableRuns{Because: record.RunsDisagreed, Evidence: fmt.Sprintf("%s in %s", strings.Join(vs, ", "), h.path)}
	}
	if before.UntilStable != nil && before.UntilStable.Because == record.RunsDisagreed {
		return &record.StableRuns{Because: record.RunsDisagreed, Evidence: before.UntilStable.Evidence}
	}
	return nil
}

// cellRuns is how long a cell's runs go on: runs of them for every cell;
// for a race-sensitive one (stable not nil), as checker.UntilStable says,
// up to maxRuns, recording in stable why they stopped.
func cellRuns(runs, maxRuns int, stable *record.StableRuns) func(outs []*engine.Outcome) bool {
	if stable == nil || maxRuns <= runs {
		if stable != nil {
			stable.Stopped = checker.StopFixed
		}
		return func(outs []*engine.Outcome) bool { return len(outs) < runs }
	}
	rule := checker.DefaultUntilStable
	rule.Bound = maxRuns
	return func(outs []*engine.Outcome) bool {
		var vs []checker.Verdict
		for _, o := range outs {
			vs = append(vs, o.Verdict)
		}
		more, stop := rule.Next(vs, runs)
		stable.Stopped = stop
		return more
	}
}

// untilStableNote is the report's sentence on the race-sensitive cells:
// the rule they ran by, and how many there were; empty when none was.
func untilStableNote(results []record.Cell, runs, maxRuns int) string {
	n, total := 0, 0
	for _, r := range results {
		if r.UntilStable != nil {
			n++
			total += r.Runs
		}
	}
	if n == 0 {
		return ""
	}
	if maxRuns <= runs {
		return fmt.Sprintf("The %d race-sensitive cell(s) (the expectation row names a race, scenarios/races.md, or the runs disagreed in an earlier matrix) ran the same %d run(s) as the others (-max-runs %d).", n, runs, maxRuns)
	}
	u := checker.DefaultUntilStable
	return fmt.Sprintf("A race-sensitive cell (its expectation row names a race, scenarios/races.md, or its runs disagreed in an earlier matrix) runs on until a run is unsafe, or until %d runs could have shown a counterexample and none did (one that shows in at least %.0f %% of runs is then missed with a chance below %.0f %%), or until %d runs: %d cell(s) here, %d runs among them.",
		u.Trials(), 100*u.Detect, 100*u.Miss, maxRuns, n, total)
}

// stableLine is the progress line's note on a race-sensitive cell: how
// many runs it took and why they stopped.
func stableLine(r record.Cell) string {
	if r.UntilStable == nil {
		return ""
	}
	return fmt.Sprintf("   (%d runs until stable, %s: %s)", r.Runs, r.UntilStable.Because, r.UntilStable.Stopped)
}
