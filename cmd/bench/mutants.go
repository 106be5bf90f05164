//go:build mutants

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/mutant"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/shard"
)

func mutantsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	list := fs.String("mutant", "", "comma-separated mutants (default: all; `bench mutants -list` names them)")
	first := fs.Bool("first", false, "stop each mutant's cells at its first catch (the cells not run are listed)")
	listOnly := fs.Bool("list", false, "print every mutant, its lock and what it breaks, and exit")
	ttl := ttlFlag(fs, time.Second, "")
	sections := fs.Int("sections", 1000, "critical sections per run")
	seed := seedFlag(fs, "base seed")
	out := outFlag(fs, "results", "mutants.md and mutants.json (with -shard: the partial result)")
	sh := shardFlag(fs)
	topos := topologiesFlag(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *listOnly {
		for _, m := range mutant.All() {
			fmt.Fprintf(stdout, "%-32s %-24s %s\n", m.Name, m.Lock, m.Breaks)
		}
		return nil
	}
	if err := checkOutDir("out", *out); err != nil {
		return err
	}
	if live := mutant.Live(); live != "" {
		return fmt.Errorf("%w: %s=%s is set; bench mutants switches mutants itself", errUsage, mutant.EnvVar, live)
	}
	names, err := splitNames(*list, mutant.Names(), func(n string) error { _, err := mutant.Lookup(n); return err })
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *ttl <= 0 || *sections < 1 {
		return fmt.Errorf("%w: -ttl must be positive and -sections at least 1", errUsage)
	}
	if *seed == 0 && !sh.Sharded() {
		*seed = time.Now().UnixNano()
	}
	// Check every mutant's lock and cells before running anything, so bad
	// input fails at once and leaves nothing behind.
	type plan struct {
		m     mutant.Mutant
		spec  impls.Spec
		cells []scenarios.Cell
	}
	var plans []plan
	for _, n := range names {
		m, _ := mutant.Lookup(n)
		spec, err := impls.Lookup(m.Lock)
		if err != nil {
			return fmt.Errorf("mutant %s breaks %s: %w", m.Name, m.Lock, err)
		}
		cells, err := scenarios.Cells([]impls.Spec{spec}, scenarios.Names())
		if err != nil {
			return err
		}
		cells = onTopologies(cells, *topos)
		// The designed catcher first: with -first it is often the only run.
		sort.SliceStable(cells, func(i, j int) bool {
			return cellLabel(cells[i]) == m.Catcher && cellLabel(cells[j]) != m.Catcher
		})
		plans = append(plans, plan{m, spec, cells})
	}
	var partial *shard.Partial
	if sh.Sharded() {
		var err error
		partial, err = newPartial("mutants", *sh, *seed, args, mutantsOptions{Mutants: names, First: *first,
			TTL: ttl.String(), Sections: *sections, Seed: *seed, Servers: serversMode(), Hosts: hostsAvailable()}, len(plans))
		if err != nil {
			return err
		}
	}

	stage, err := leftovers.MakeDir("mutants")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	start := time.Now()
	opts := func(c scenarios.Cell, s int64) engine.Options {
		return engine.Options{Impl: c.Impl, Topology: c.Topology, Fencing: c.Fencing, Seed: s, TTL: *ttl, Clients: 8,
			Sections: *sections, OutDir: filepath.Join(stage, "scratch")}
	}
	// unmutated caches each cell's verdict without a mutant: several
	// mutants of one lock are caught by the same cells.
	unmutated := map[string]scenarios.Verdict{}
	var results []MutantResult
	for pi, p := range plans {
		if !sh.Owns(p.m.Name) {
			continue
		}
		r := MutantResult{Mutant: p.m.Name, Lock: p.m.Lock, Breaks: p.m.Breaks, Catcher: p.m.Catcher, CaughtBy: []string{}}
		if _, _, ok := p.m.Test(); ok {
			// Its designed catcher is a Go test: run first, as a designed
			// cell is.
			mc, err := runTestCatcher(ctx, p.m)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				// As a cell that could not run: the report shows why (a
				// test that skips in this server backend, say).
				mc.NotRun = "the test could not run: " + err.Error()
			}
			mark := ""
			if mc.Caught {
				mark = "   CAUGHT"
				r.Caught = true
				r.CaughtBy = append(r.CaughtBy, mc.Cell)
			}
			fmt.Fprintf(stderr, "[%d/%d] %-30s %-36s %5.1fs %s%s%s\n", pi+1, len(plans), p.m.Name, mc.Cell, mc.Seconds, mc.NotRun, mc.Detail, mark)
			r.Cells = append(r.Cells, mc)
		}
		for ci, c := range p.cells {
			exp, err := c.Expect()
			mc := MutantCell{Cell: cellLabel(c), Expected: exp.Verdict}
			switch why := checker.CannotCatch(exp.Verdict); {
			case err != nil:
				mc.NotRun = "no reviewed expectation: " + err.Error()
			case why != "":
				mc.NotRun = why
			case *first && r.Caught:
				mc.NotRun = "-first: caught already"
			}
			if mc.NotRun != "" {
				r.Cells = append(r.Cells, mc)
				continue
			}
			// From the mutant's and the cell's places alone, not from how
			// many cells ran before (which -first and other shards
			// decide): a shard runs each cell with the unsharded seed.
			mc.Seed = *seed + int64(pi)*1000 + int64(ci) + 1
			restore, err := mutant.Activate(p.m.Name)
			if err != nil {
				return err
			}
			cellStart := time.Now()
			o, err := engine.RunScenario(ctx, c.Scenario, opts(c, mc.Seed))
			restore()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				// One cell that could not run (a broken mutant may leave
				// a lock that cannot even start) costs that cell, not the
				// whole table; the report shows why.
				mc.NotRun = "the run failed: " + err.Error()
				fmt.Fprintf(stderr, "[%d/%d] %-30s %-36s run failed: %v\n", pi+1, len(plans), p.m.Name, c.Name(), err)
				r.Cells = append(r.Cells, mc)
				continue
			}
			mc.Verdict, mc.Sections, mc.Grants, mc.Detail, mc.Figures = o.Verdict, o.Sections, o.GrantsAfterFault, o.Detail, o.Figures
			mc.Seconds = time.Since(cellStart).Seconds()
			if checker.FailsUnexpectedly(exp.Verdict, o.Verdict) {
				// A catch counts only if the unmutated lock passes the same
				// cell: otherwise the cell, not the mutant, failed.
				u, ok := unmutated[c.Name()]
				if !ok {
					uo, err := engine.RunScenario(ctx, c.Scenario, opts(c, mc.Seed))
					if ctx.Err() != nil {
						return ctx.Err()
					}
					if err == nil {
						u = uo.Verdict
						unmutated[c.Name()] = u
					} else {
						mc.Detail += "; the unmutated run failed: " + err.Error()
					}
				}
				mc.Unmutated = u
				mc.Caught = checker.Caught(exp.Verdict, o.Verdict, u)
			}
			if mc.Caught {
				r.Caught = true
				r.CaughtBy = append(r.CaughtBy, mc.Cell)
			}
			mark := ""
			switch {
			case mc.Caught:
				mark = "   CAUGHT"
			case mc.Unmutated != "":
				mark = fmt.Sprintf("   (the cell fails without the mutant too: %s)", mc.Unmutated)
			}
			fmt.Fprintf(stderr, "[%d/%d] %-30s %-36s %-11s %5.1fs%s\n", pi+1, len(plans), p.m.Name, c.Name(), o.Verdict, mc.Seconds, mark)
			r.Cells = append(r.Cells, mc)
		}
		if !r.Caught {
			fmt.Fprintf(stderr, "[%d/%d] %-30s SURVIVED every cell\n", pi+1, len(plans), p.m.Name)
		}
		results = append(results, r)
		if partial != nil {
			if err := addCell(partial, p.m.Name, pi, r); err != nil {
				return err
			}
		}
	}
	if partial != nil {
		// A survivor fails the merged run, not this shard: a failing
		// shard would only be retried by a job engine.
		return writePartial(partial, *out, start, stdout)
	}

	cmdline := strings.TrimSpace("go run -tags " + mutant.Tag + " ./cmd/bench mutants " + strings.Join(args, " "))
	if err := writeMutantsReport(stage, results, cmdline, commitNamed(), *ttl, *sections, *seed, time.Since(start)); err != nil {
		return err
	}
	return publishMutants(stage, *out, results, stdout)
}

// liveMutant names the mutant live in this process ("" for none): this
// bench was built with the mutants tag, so LOCKLAB_MUTANT is honoured.
func liveMutant() (string, error) { return mutant.Live(), nil }

// cellLabel is a cell's name without its lock, as the registry's Catcher
// names it: "late-release", "pause-past-ttl/fenced".
func cellLabel(c scenarios.Cell) string {
	return mutant.Label(c.Name(), c.Impl.Name)
}
