package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/mutant"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/shard"
	"github.com/locklab/locklab/topology"
)

// splitNames parses a comma list, checking each name with lookup.
func splitNames(s string, all []string, lookup func(string) error) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return all, nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if err := lookup(n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func matrix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	implList := fs.String("impl", "", "comma-separated implementations (default: all)")
	scenarioList := fs.String("scenario", "", "comma-separated scenarios (default: all)")
	topos := topologiesFlag(fs)
	profiles := profilesFlag(fs)
	runs := fs.Int("runs", 3, "runs per cell, the same for every cell but a race-sensitive one, which runs on until stable (see -max-runs); one counterexample makes the cell unsafe, one inconclusive run keeps it from safe")
	maxRuns := maxRunsFlag(fs)
	historyPath := historyFlag(fs)
	ttl := ttlFlag(fs, time.Second, "(default: the profile's, 1s under fast, 10s under production)")
	seed := seedFlag(fs, "base seed; run i of a cell uses seed+i")
	out := outFlag(fs, "results", "correctness.md, correctness.json and counterexamples/ (with -shard: the partial result)")
	sh := shardFlag(fs)
	parallel := parallelFlag(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if err := checkOutDir("out", *out); err != nil {
		return err
	}
	m, err := liveMutant()
	if err != nil {
		return err
	}
	if m != "" {
		// The matrix's verdicts are our locks' own; a broken one's belong in bench mutants.
		return fmt.Errorf("%w: %s=%s is set: the matrix judges the locks as written (see bench mutants)", errUsage, mutant.EnvVar, m)
	}
	implNames, err := splitNames(*implList, impls.Names(), func(n string) error { _, err := impls.Lookup(n); return err })
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	scenarioNames, err := splitNames(*scenarioList, scenarios.Names(), func(n string) error { _, err := scenarios.Lookup(n); return err })
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *runs < 1 || *ttl <= 0 || *parallel < 1 {
		return fmt.Errorf("%w: -runs and -parallel must be at least 1 and -ttl positive", errUsage)
	}
	// Each profile's cells run with its own TTL, or -ttl when given.
	ttls := map[string]time.Duration{}
	for _, name := range *profiles {
		p, err := topology.LookupProfile(name)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if ttls[p.Name], err = ttlFor(p, *ttl, flagGiven(fs, "ttl")); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if max(*runs, *maxRuns) > cellSeedSpan {
		// Cell i's runs take seeds seed+i*cellSeedSpan onward: more runs
		// would reuse the next cell's.
		return fmt.Errorf("%w: -runs and -max-runs must be at most %d", errUsage, cellSeedSpan)
	}
	historyNamed := false
	fs.Visit(func(f *flag.Flag) { historyNamed = historyNamed || f.Name == "history" })
	history, err := readRunHistory(*historyPath, historyNamed)
	if err != nil {
		return err
	}
	if *seed == 0 && !sh.Sharded() {
		*seed = time.Now().UnixNano()
	}
	var specs []impls.Spec
	for _, n := range implNames {
		s, _ := impls.Lookup(n)
		specs = append(specs, s)
	}
	cells, err := scenarios.Cells(specs, scenarioNames)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	cells = onTopologies(cells, *topos)
	if cells, err = scenarios.UnderProfiles(cells, *profiles); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(cells) == 0 {
		return fmt.Errorf("%w: no scenario applies to the chosen implementations, topologies and profiles (%s runs on %s)",
			errUsage, topology.ProductionName, strings.Join(topology.Production.Topologies(), ", "))
	}
	var partial *shard.Partial
	if sh.Sharded() {
		partial, err = newPartial("matrix", *sh, *seed, args, matrixOptions{Impls: implNames, Scenarios: scenarioNames,
			Runs: *runs, TTL: ttls[(*profiles)[0]].String(), Seed: *seed, Servers: serversMode(), Hosts: hostsAvailable(),
			MaxRuns: *maxRuns, History: history.path, Profiles: profilesOption(*profiles), TTLs: ttlsOption(ttls)}, len(cells))
		if err != nil {
			return err
		}
	}

	// Everything is written to a staging dir and moved into place at the
	// end, so a failed run leaves no partial results behind.
	stage, err := leftovers.MakeDir("matrix")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	ceDir := filepath.Join(stage, "counterexamples")
	start := time.Now()
	// Every cell must have a reviewed expectation before anything runs.
	for _, c := range cells {
		if _, err := c.Expect(); err != nil {
			return err
		}
	}
	// The cells this shard owns, by their position in the whole list
	// (their seeds and their place in the merged result depend on it),
	// the ones that run alone last.
	var owned []int
	for _, i := range scenarios.AloneLast(cells) {
		if sh.Owns(cells[i].Name()) {
			owned = append(owned, i)
		}
	}
	cellResults := make([]*record.Cell, len(cells))
	var printMu sync.Mutex // cells side by side print whole lines
	// A cell that cannot run (a server or guest that does not start) does
	// not end the run: the others go on, so one run names every such cell
	// instead of one per hour, and the run then fails having written
	// nothing, as a matrix with a hole in it is not a result.
	var notRun []string
	alone := func(i int) bool { return scenarios.RunsAlone(cells[i]) }
	err = forEachParallel(ctx, owned, *parallel, alone, func(ctx context.Context, i int) error {
		c := cells[i]
		exp, _ := c.Expect()
		cellStart := time.Now()
		stable := history.untilStable(c, exp)
		cellTTL := ttls[topology.OrFast(c.Profile)]
		outs, err := engine.RunCellWhile(ctx, c, engine.Options{
			Seed: *seed + int64(i)*cellSeedSpan, TTL: cellTTL, OutDir: ceDir, Clients: 8, Sections: 2000,
		}, cellRuns(*runs, *maxRuns, stable))
		if ctx.Err() != nil {
			// Interrupted (Ctrl-C): whatever the cell's runs returned came
			// from servers stopped under them, not from the lock, so the
			// cell says it was cut, neither a verdict nor "could not run".
			printMu.Lock()
			fmt.Fprintf(stderr, "[%d/%d] %-48s %v\n", i+1, len(cells), c.Name(), context.Cause(ctx))
			printMu.Unlock()
			return context.Cause(ctx)
		}
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, c.Name()) {
				msg = c.Name() + ": " + msg
			}
			printMu.Lock()
			fmt.Fprintf(stderr, "[%d/%d] could not run: %s\n", i+1, len(cells), msg)
			notRun = append(notRun, msg)
			printMu.Unlock()
			return nil
		}
		r := cellResult(c, exp, outs, stage, cellTTL, time.Since(cellStart))
		r.UntilStable = stable
		r.Alone = scenarios.AloneBecause(c)
		mark := ""
		if !checker.Agrees(r.Expected, r.Verdict) {
			mark = fmt.Sprintf("   (expected %s)", r.Expected)
		}
		printMu.Lock()
		fmt.Fprintf(stderr, "[%d/%d] %-48s %-26s %5.1fs%s%s%s\n", i+1, len(cells), c.Name(), r.VerdictText(), r.Seconds, mark, stableLine(r), phaseLine(outs))
		printMu.Unlock()
		cellResults[i] = &r
		return nil
	})
	if err != nil {
		return err
	}
	if len(notRun) > 0 {
		sort.Strings(notRun)
		return fmt.Errorf("%d of %d cells could not run, so the matrix wrote nothing (the verdicts of the others are printed above):\n  %s",
			len(notRun), len(owned), strings.Join(notRun, "\n  "))
	}
	var results []record.Cell
	for _, i := range owned {
		r := *cellResults[i]
		results = append(results, r)
		if partial != nil {
			// The cell's position in the whole run: its seed above is the
			// unsharded run's, and the merge puts it back in its place.
			if err := addCell(partial, cells[i].Name(), i, r); err != nil {
				return err
			}
		}
	}
	// Keep one counterexample per unsafe cell (the first run's), not every
	// run's: the results stay a set a reader can open.
	keep := map[string]bool{}
	for _, r := range results {
		keep[r.Counterexample], keep[r.History] = true, true
	}
	if entries, err := os.ReadDir(ceDir); err == nil {
		for _, e := range entries {
			if !keep[filepath.Join("counterexamples", e.Name())] {
				os.Remove(filepath.Join(ceDir, e.Name()))
			}
		}
	}
	if partial != nil {
		if err := addFiles(partial, ceDir, "counterexamples", []string{"*"}); err != nil {
			return err
		}
		return writePartial(partial, *out, start, stdout)
	}
	cmdline := "go run ./cmd/bench matrix " + strings.Join(args, " ")
	if err := writeMatrixReport(stage, *out, results, cmdline, commitNamed(), ttls[(*profiles)[0]], *runs, *maxRuns, *seed, time.Since(start)); err != nil {
		return err
	}
	return publishMatrix(stage, *out, results, stdout)
}

// cellSeedSpan is how far apart the matrix's cells' base seeds are: cell i
// runs with seeds seed+i*cellSeedSpan onward, so no two cells share one.
const cellSeedSpan = 1000

// matrixFiles are the entries of -out a matrix owns.
var matrixFiles = []string{"correctness.md", "correctness.json", "counterexamples"}

// publishMatrix moves a written matrix from stage into out and sums it up.
func publishMatrix(stage, out string, results []record.Cell, stdout io.Writer) error {
	if _, err := report.Publish(stage, out, matrixFiles); err != nil {
		return err
	}
	mismatches := 0
	for _, r := range results {
		if !checker.Agrees(r.Expected, r.Verdict) {
			mismatches++
		}
	}
	fmt.Fprintf(stdout, "cells: %d, as expected: %d, differing: %d\nreport: %s\n",
		len(results), len(results)-mismatches, mismatches, filepath.Join(out, "correctness.md"))
	return nil
}

// matrixOptions are what decide a matrix's cells and verdicts: the shards
// of one matrix agree on all of them.
type matrixOptions struct {
	Impls     []string `json:"impls"`
	Scenarios []string `json:"scenarios"`
	Runs      int      `json:"runs"`
	TTL       string   `json:"ttl"`
	Seed      int64    `json:"seed"`
	Servers   string   `json:"servers"`
	// Hosts: whether the lab's own hosts were available (see hostsAvailable).
	Hosts bool `json:"hosts"`
	// MaxRuns and History decide how long a race-sensitive cell runs
	// (-max-runs, -history); absent in partials older than them.
	MaxRuns int    `json:"max_runs,omitempty"`
	History string `json:"history,omitempty"`
	// Profiles and TTLs are the timeout profiles other than fast the
	// matrix ran and each one's TTL (absent when it ran the fast one
	// alone, as every matrix before the axis did).
	Profiles []string          `json:"profiles,omitempty"`
	TTLs     map[string]string `json:"ttls,omitempty"`
}

// profilesOption is -profile as matrixOptions keeps it: nothing when the
// matrix ran the fast profile alone, so such a matrix's options read as
// they always did.
func profilesOption(profiles []string) []string {
	if len(profiles) == 1 && profiles[0] == topology.FastName {
		return nil
	}
	return profiles
}

// ttlsOption is each profile's TTL as matrixOptions keeps it, nothing for
// the fast profile alone.
func ttlsOption(ttls map[string]time.Duration) map[string]string {
	if len(ttls) == 1 {
		if _, fast := ttls[topology.FastName]; fast {
			return nil
		}
	}
	out := map[string]string{}
	for p, t := range ttls {
		out[p] = t.String()
	}
	return out
}

// mergeMatrix writes the matrix the shards of run make, as `bench matrix`
// would have written it unsharded.
func mergeMatrix(run shard.Run, stage, out string, stdout io.Writer) error {
	var o matrixOptions
	if err := json.Unmarshal(run.Options, &o); err != nil {
		return fmt.Errorf("matrix options: %w", err)
	}
	ttl, err := time.ParseDuration(o.TTL)
	if err != nil {
		return fmt.Errorf("matrix options: %w", err)
	}
	results := make([]record.Cell, len(run.Cells))
	for i, c := range run.Cells {
		if err := json.Unmarshal(c.Result, &results[i]); err != nil {
			return fmt.Errorf("cell %s: %w", c.Key, err)
		}
	}
	if err := writeFiles(stage, run.Files); err != nil {
		return err
	}
	cmdline := "go run ./cmd/bench matrix " + strings.Join(append(run.Args, "-out", out), " ")
	if err := writeMatrixReport(stage, out, results, cmdline, run.Commit, ttl, o.Runs, o.MaxRuns, o.Seed, time.Duration(run.Seconds*float64(time.Second))); err != nil {
		return err
	}
	return publishMatrix(stage, out, results, stdout)
}

// expectationsLink is the expectation table as a link from out, where the
// report is published: a fixed "../scenarios/" was right from results/ only,
// and pointed nowhere from results/topologies/NAME/. Out of the checkout
// (a report in /tmp) it is the table's name, not a link.
func expectationsLink(out string) string {
	const name = "scenarios/expectations.md"
	absOut, err := filepath.Abs(out)
	if err != nil {
		return name
	}
	wd, err := os.Getwd()
	if err != nil {
		return name
	}
	if _, err := os.Stat(filepath.Join(wd, name)); err != nil {
		return name
	}
	if in, err := filepath.Rel(wd, absOut); err != nil || in == ".." || strings.HasPrefix(in, "../") {
		return name
	}
	rel, err := filepath.Rel(absOut, filepath.Join(wd, name))
	if err != nil {
		return name
	}
	return "[" + name + "](" + filepath.ToSlash(rel) + ")"
}

func writeMatrixReport(dir, out string, results []record.Cell, cmdline, commit string, ttl time.Duration, runs, maxRuns int, seed int64, took time.Duration) error {
	js, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "correctness.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# Correctness matrix\n\n")
	fmt.Fprintf(&b, "Generated by `%s` at commit %s on %s (%s, %d cores, host %s) in %v. TTL / session timeout %s, %d run(s) per cell, base seed %d. ",
		strings.TrimSpace(cmdline), commit, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), host, took.Round(time.Second), ttlText(results, ttl), runs, seed)
	fmt.Fprintf(&b, "Every verdict comes from real servers and real worker processes; each history was checked by porcupine. Every cell gets the same number of runs at least, whatever the lab expects of it; one counterexample makes a cell unsafe (a fault lands when the scheduler lets it; *unsafe* means a counterexample exists). %s Every run must check at least %d critical sections and see at least %d grants after its fault, or it is *inconclusive*, never safe. Expectations come from the reviewed table %s. Do not edit: rerun the command.\n\n", untilStableNote(results, runs, maxRuns), checker.DefaultMinimum.Sections, checker.DefaultMinimum.GrantsAfterFault, expectationsLink(out))
	fmt.Fprintf(&b, "Verdicts: **safe** linearizable in every run; **unsafe** porcupine found a counterexample (linked: open it in a browser; the faults are on the `faults` row); **stuck** no client held the lock within the bound after the fault; **unavailable** no grants while a quorum was cut; **inconclusive** too little progress to judge; **n/a** the fault never reached the lock (measured in the run); **unknown** the checker timed out. A cell marked ⚠ differs from the lab's expectation (see the notes below the table).\n\n")

	// The grid: one row per implementation, one column per scenario.
	var implOrder, scenarioOrder []string
	seenI, seenS := map[string]bool{}, map[string]bool{}
	byKey := map[string][]record.Cell{}
	for _, r := range results {
		if !seenI[r.Row()] {
			seenI[r.Row()] = true
			implOrder = append(implOrder, r.Row())
		}
		if !seenS[r.Scenario] {
			seenS[r.Scenario] = true
			scenarioOrder = append(scenarioOrder, r.Scenario)
		}
		byKey[r.Row()+"|"+r.Scenario] = append(byKey[r.Row()+"|"+r.Scenario], r)
	}
	sort.SliceStable(scenarioOrder, func(i, j int) bool { return scenarioRank(scenarioOrder[i]) < scenarioRank(scenarioOrder[j]) })
	grid := report.NewTable(append([]string{"implementation"}, scenarioOrder...)...)
	for _, impl := range implOrder {
		row := []string{"`" + impl + "`"}
		for _, sc := range scenarioOrder {
			var parts []string
			for _, r := range byKey[impl+"|"+sc] {
				v := r.VerdictText()
				if r.Counterexample != "" {
					v = fmt.Sprintf("[%s](%s)", v, r.Counterexample)
				}
				if r.Fencing {
					v = "fenced: " + v
				}
				v = r.ProfileLabel() + v
				if !checker.Agrees(r.Expected, r.Verdict) {
					v += " ⚠"
				}
				parts = append(parts, v)
			}
			if len(parts) == 0 {
				parts = []string{"–"}
			}
			row = append(row, strings.Join(parts, "<br>"))
		}
		grid.Row(row...)
	}
	b.WriteString(grid.String())
	b.WriteString(profileDifferences(results))

	b.WriteString("\n## Every cell\n\n")
	cells := report.NewTable("cell", "verdict", "expected", "why expected", "runs (verdicts)", "sections checked (unknown), least per run",
		"grants after the fault, least per run", "recovery", "figures", "counterexample")
	for _, r := range results {
		name := r.Row() + " / " + r.Scenario
		if r.Fencing {
			name += " / fenced"
		}
		if r.Profile != "" {
			name += " / " + r.Profile
		}
		rec := ""
		if len(r.RecoveryMillis) > 0 {
			var ms []string
			for _, m := range r.RecoveryMillis {
				ms = append(ms, fmt.Sprintf("%d ms", m))
			}
			rec = strings.Join(ms, ", ")
			if len(r.LeaseLeftMillis) == len(r.RecoveryMillis) {
				var left []string
				for _, m := range r.LeaseLeftMillis {
					left = append(left, fmt.Sprintf("%d", m))
				}
				rec += " (lease left at the strike: " + strings.Join(left, ", ") + " ms)"
			}
		}
		var figs []string
		for _, k := range sortedKeys(r.Figures) {
			if k == "recovery-ms" {
				continue
			}
			figs = append(figs, fmt.Sprintf("%s %g", k, r.Figures[k]))
		}
		ce := ""
		switch {
		case r.Counterexample != "":
			ce = fmt.Sprintf("[timeline](%s), [history](%s)", r.Counterexample, r.History)
		case r.History != "":
			ce = fmt.Sprintf("[history](%s) (stuck)", r.History)
		}
		exp := string(r.Expected)
		if !checker.Agrees(r.Expected, r.Verdict) {
			exp = "⚠ " + exp
		}
		var rv []string
		for _, v := range r.RunVerdicts {
			rv = append(rv, string(v))
		}
		runsCol := fmt.Sprintf("%d (%s)", r.Runs, strings.Join(rv, ", "))
		if u := r.UntilStable; u != nil {
			runsCol += fmt.Sprintf("; until stable (%s), stopped: %s", u.Because, u.Stopped)
		}
		cells.Row(name, r.VerdictText(), exp, r.Why, runsCol,
			fmt.Sprintf("%d (%d), %d", r.Sections, r.Unknown, r.MinSections), fmt.Sprintf("%d, %d", r.GrantsAfterFault, r.MinGrantsAfterFault),
			rec, strings.Join(figs, ", "), ce)
	}
	b.WriteString(cells.String())
	b.WriteString(timeSpent(results))
	fmt.Fprintf(&b, "\nReproduce one cell: `go run ./cmd/bench check -impl IMPL -topology TOPOLOGY -scenario SCENARIO [-fencing] [-profile PROFILE] -ttl TTL -seed SEED` with the cell's TTL and a seed from correctness.json.\n")
	return os.WriteFile(filepath.Join(dir, "correctness.md"), []byte(b.String()), 0o644)
}

// ttlText is the matrix's TTL for its header: ttl when every cell ran
// under the fast profile, as every matrix before the profile axis did,
// else each profile's TTL, read off its cells.
func ttlText(results []record.Cell, ttl time.Duration) string {
	byProfile := map[string]string{}
	var order []string
	for _, r := range results {
		p := topology.OrFast(r.Profile)
		if _, seen := byProfile[p]; !seen {
			order = append(order, p)
			byProfile[p] = r.TTL
		}
	}
	if len(order) == 0 || (len(order) == 1 && order[0] == topology.FastName) {
		return ttl.String()
	}
	var parts []string
	for _, p := range order {
		parts = append(parts, fmt.Sprintf("%s under the %s profile", byProfile[p], p))
	}
	return strings.Join(parts, ", ")
}

// profileDifferences is the matrix's section on the cells whose verdict
// differs between the fast profile and another one, both measured in this
// matrix, each with the other profile's row, which says which timeout
// decided it; empty when the matrix ran one profile or none differ.
func profileDifferences(results []record.Cell) string {
	fast := map[string]record.Cell{}
	for _, r := range results {
		if r.Profile == "" {
			fast[r.Key()] = r
		}
	}
	t := report.NewTable("cell", "fast", "profile", "verdict there", "why (the profile's row)")
	n := 0
	for _, r := range results {
		if r.Profile == "" {
			continue
		}
		f := r
		f.Profile = ""
		base, ok := fast[f.Key()]
		if !ok || base.Verdict == r.Verdict {
			continue
		}
		name := r.Row() + " / " + r.Scenario
		if r.Fencing {
			name += " / fenced"
		}
		t.Row(name, base.VerdictText(), r.Profile, r.VerdictText(), r.Why)
		n++
	}
	if n == 0 {
		return ""
	}
	return "\n## Where the profile decides\n\nThe cells whose verdict differs between the fast profile and another, with the reason the other profile's row gives (which timeout decided it).\n\n" + t.String()
}

// scenarioRank orders the matrix's columns as the lessons tell the story.
func scenarioRank(name string) int {
	order := []string{"contention", "holder-crash", "crash-after-setnx", "client-clock-skew", "late-release",
		"pause-past-ttl", "slow-work-past-ttl", "coupon", "server-restart", "redis-failover",
		"redlock-restart", "redlock-restart-delayed", "redlock-clock-jump", "redlock-partition"}
	for i, n := range order {
		if n == name {
			return i
		}
	}
	return len(order)
}

// phaseLine sums the runs' phases (engine.Phase) in the order they
// happened, for the matrix's progress line: where the cell's time went.
func phaseLine(outs []*engine.Outcome) string {
	var names []string
	sum := map[string]float64{}
	for _, o := range outs {
		for _, p := range o.Phases {
			if _, seen := sum[p.Name]; !seen {
				names = append(names, p.Name)
			}
			sum[p.Name] += p.Seconds
		}
	}
	if len(names) == 0 {
		return ""
	}
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f", n, sum[n]))
	}
	return "   [" + strings.Join(parts, ", ") + "]"
}

// cellResult sums a cell's runs into its row of correctness.json.
func cellResult(c scenarios.Cell, exp scenarios.Expectation, outs []*engine.Outcome, stage string, ttl, took time.Duration) record.Cell {
	profile := ""
	if p := topology.OrFast(c.Profile); p != topology.FastName {
		profile = p
	}
	r := record.Cell{Impl: c.Impl.Name, Topology: topology.Or(c.Topology), Profile: profile, Scenario: c.Scenario, Fencing: c.Fencing,
		Expected: exp.Verdict, Why: exp.Why, Runs: len(outs),
		Figures: map[string]float64{}, Seconds: took.Seconds(), TTL: ttl.String()}
	for j, o := range outs {
		r.RunVerdicts = append(r.RunVerdicts, o.Verdict)
		if o.Exercised {
			r.ExercisedRuns++
		}
		r.Clients, r.Processes = o.Clients, o.Processes
		if j == 0 || o.Sections < r.MinSections {
			r.MinSections = o.Sections
		}
		if j == 0 || o.GrantsAfterFault < r.MinGrantsAfterFault {
			r.MinGrantsAfterFault = o.GrantsAfterFault
		}
		r.GrantsAfterFault += o.GrantsAfterFault
		r.Sections += o.Sections
		r.Unknown += o.Unknown
		r.Seeds = append(r.Seeds, o.Seed)
		if o.Recovery > 0 {
			r.RecoveryMillis = append(r.RecoveryMillis, o.Recovery.Milliseconds())
		}
		if left, ok := o.Figures["lease-left-ms"]; ok {
			r.LeaseLeftMillis = append(r.LeaseLeftMillis, int64(left))
		}
		for _, p := range o.Phases {
			if r.PhaseSeconds == nil {
				r.PhaseSeconds = map[string]float64{}
			}
			r.PhaseSeconds[p.Name] += p.Seconds
		}
		for k, v := range o.Figures {
			r.Figures[k] = v // the last run's figures
		}
		if o.Detail != "" {
			r.Detail = o.Detail
		}
		switch {
		case o.HTML != "" && r.Counterexample == "":
			r.Counterexample, _ = filepath.Rel(stage, o.HTML)
			r.History, _ = filepath.Rel(stage, o.History)
		case o.History != "" && r.History == "" && checker.LivenessViolated(o.Verdict):
			// The first stuck run's history, unless a counterexample
			// (which replaces it) comes later.
			r.History, _ = filepath.Rel(stage, o.History)
		}
	}
	r.Verdict = checker.CellVerdict(r.RunVerdicts)
	return r
}

// forEachParallel calls do for every item, at most n at once, in the
// items' order of start; an item alone says so runs with no other beside
// it (scenarios.Scenario.Alone). The first error cancels the calls still
// running (their ctx) and is returned once every call has returned.
func forEachParallel(ctx context.Context, items []int, n int, alone func(item int) bool, do func(ctx context.Context, item int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		// Every call holds the gate: an alone one by itself, the others
		// shared. A call waiting alone keeps new ones from sharing it.
		gate sync.RWMutex
	)
	slots := make(chan struct{}, max(n, 1))
	for _, it := range items {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if alone != nil && alone(it) {
				gate.Lock()
				defer gate.Unlock()
			} else {
				gate.RLock()
				defer gate.RUnlock()
			}
			if ctx.Err() != nil {
				return
			}
			if err := do(ctx, it); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		// The caller's ctx ended (Ctrl-C): not every cell ran.
		return ctx.Err()
	}
	return firstErr
}

// timeSpent is the report's account of where the matrix's time went: the
// cells that shared the machine and those that ran alone, each reason
// with its cells and their seconds (issue 46: a cell that runs alone says
// why). Seconds are the cells' own, summed: side by side, the shared ones
// took less of the wall clock than their sum.
func timeSpent(results []record.Cell) string {
	type group struct {
		cells   int
		seconds float64
	}
	var shared group
	alone := map[string]*group{}
	for _, r := range results {
		if r.Alone == "" {
			shared.cells++
			shared.seconds += r.Seconds
			continue
		}
		g := alone[r.Alone]
		if g == nil {
			g = &group{}
			alone[r.Alone] = g
		}
		g.cells++
		g.seconds += r.Seconds
	}
	if len(alone) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Where the time went\n\n%d cell(s) shared the machine, %s of cell time between them. These ran alone, with no other cell beside them, for the reason given:\n\n", shared.cells, time.Duration(shared.seconds*float64(time.Second)).Round(time.Second))
	t := report.NewTable("why alone", "cells", "cell time")
	for _, why := range slices.SortedFunc(maps.Keys(alone), func(a, b string) int {
		return cmp.Or(cmp.Compare(alone[b].seconds, alone[a].seconds), cmp.Compare(a, b))
	}) {
		g := alone[why]
		t.Row(why, fmt.Sprint(g.cells), time.Duration(g.seconds*float64(time.Second)).Round(time.Second).String())
	}
	b.WriteString(t.String())
	return b.String()
}
