//go:build mutants

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/mutant"
	"github.com/locklab/locklab/report"
	"github.com/locklab/locklab/scenarios"
)

// The rows of results/mutants.json; their types live in package
// scenarios so that the report site, built without the mutants tag, reads
// the same ones.
type (
	MutantCell   = scenarios.MutantCell
	MutantResult = scenarios.MutantResult
)

func mutantsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	list := fs.String("mutant", "", "comma-separated mutants (default: all; `bench mutants -list` names them)")
	first := fs.Bool("first", false, "stop each mutant's cells at its first catch (the cells not run are listed)")
	listOnly := fs.Bool("list", false, "print every mutant, its lock and what it breaks, and exit")
	ttl := ttlFlag(fs, time.Second, "")
	sections := fs.Int("sections", 1000, "critical sections per run")
	seed := seedFlag(fs, "base seed")
	out := outFlag(fs, "results", "mutants.md and mutants.json")
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
	if *seed == 0 {
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
		// The designed catcher first: with -first it is often the only run.
		sort.SliceStable(cells, func(i, j int) bool {
			return cellLabel(cells[i]) == m.Catcher && cellLabel(cells[j]) != m.Catcher
		})
		plans = append(plans, plan{m, spec, cells})
	}

	stage, err := leftovers.MakeDir("mutants")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	start := time.Now()
	opts := func(c scenarios.Cell, s int64) engine.Options {
		return engine.Options{Impl: c.Impl, Fencing: c.Fencing, Seed: s, TTL: *ttl, Clients: 8,
			Sections: *sections, OutDir: filepath.Join(stage, "scratch")}
	}
	// unmutated caches each cell's verdict without a mutant: several
	// mutants of one lock are caught by the same cells.
	unmutated := map[string]scenarios.Verdict{}
	var results []MutantResult
	runNo := int64(0)
	for pi, p := range plans {
		r := MutantResult{Mutant: p.m.Name, Lock: p.m.Lock, Breaks: p.m.Breaks, Catcher: p.m.Catcher, CaughtBy: []string{}}
		for _, c := range p.cells {
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
			runNo++
			mc.Seed = *seed + runNo
			restore, err := mutant.Activate(p.m.Name)
			if err != nil {
				return err
			}
			cellStart := time.Now()
			o, err := scenarios.Run(ctx, c.Scenario, opts(c, mc.Seed))
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
					uo, err := scenarios.Run(ctx, c.Scenario, opts(c, mc.Seed))
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
	}

	cmdline := strings.TrimSpace("go run -tags " + mutant.Tag + " ./cmd/bench mutants " + strings.Join(args, " "))
	if err := writeMutantsReport(stage, results, cmdline, *ttl, *sections, *seed, time.Since(start)); err != nil {
		return err
	}
	if _, err := report.Publish(stage, *out, []string{"mutants.md", "mutants.json"}); err != nil {
		return err
	}
	var survivors []string
	for _, r := range results {
		if !r.Caught {
			survivors = append(survivors, r.Mutant)
		}
	}
	fmt.Fprintf(stdout, "mutants: %d, caught: %d, survived: %d\nreport: %s\n",
		len(results), len(results)-len(survivors), len(survivors), filepath.Join(*out, "mutants.md"))
	if len(survivors) > 0 {
		return fmt.Errorf("%d mutant(s) survived every cell, each a missing scenario: %s", len(survivors), strings.Join(survivors, ", "))
	}
	return nil
}

// liveMutant names the mutant live in this process ("" for none): this
// bench was built with the mutants tag, so LOCKLAB_MUTANT is honoured.
func liveMutant() (string, error) { return mutant.Live(), nil }

// cellLabel is a cell's name without its lock, as the registry's Catcher
// names it: "late-release", "pause-past-ttl/fenced".
func cellLabel(c scenarios.Cell) string {
	return strings.TrimPrefix(c.Name(), c.Impl.Name+"/")
}

func writeMutantsReport(dir string, results []MutantResult, cmdline string, ttl time.Duration, sections int, seed int64, took time.Duration) error {
	js, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "mutants.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# Mutants the matrix must catch\n\n")
	fmt.Fprintf(&b, "Generated by `%s` on %s (%s, %d cores, host %s) in %v. TTL / session timeout %v, 8 clients, %d critical sections per run, one run per cell, base seed %d. Do not edit: rerun the command.\n\n",
		cmdline, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), host, took.Round(time.Second), ttl, sections, seed)
	fmt.Fprintf(&b, "Each mutant is one of our correct locks broken on purpose in one small way, compiled in only under the build tag `%s` and live only under `%s=<name>` (package `impls/mutant`; worker processes inherit it). "+
		"Each cell of the mutant's lock runs once with the mutant live. A cell **catches** the mutant when its verdict moves from what the lab expects of the correct lock (`scenarios` expectation table) to unsafe or stuck, "+
		"and the same cell, run right after with no mutant, does not. A cell expected unsafe already, or whose fault does not reach the lock, cannot catch anything and is not run. "+
		"A mutant no cell catches is a scenario the matrix is missing.\n\n", mutant.Tag, mutant.EnvVar)

	summary := report.NewTable("mutant", "lock", "what it breaks", "caught by", "cells run", "not run")
	for _, r := range results {
		ran, notRun := 0, 0
		for _, c := range r.Cells {
			if c.NotRun == "" {
				ran++
			} else {
				notRun++
			}
		}
		by := "**SURVIVED**: a missing scenario"
		if r.Caught {
			by = strings.Join(r.CaughtBy, ", ")
		}
		summary.Row("`"+r.Mutant+"`", "`"+r.Lock+"`", r.Breaks, by, strconv.Itoa(ran), strconv.Itoa(notRun))
	}
	b.WriteString(summary.String())

	fmt.Fprintf(&b, "\n## Every cell\n\nVerdict with the mutant live, beside the expectation for the correct lock; *unmutated* is the same cell's verdict without the mutant, run after each catch.\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "### `%s` (%s)\n\n%s. Designed to be caught by `%s`.\n\n", r.Mutant, r.Lock, r.Breaks, r.Catcher)
		cells := report.NewTable("cell", "expected", "with the mutant", "unmutated", "caught", "sections", "grants after fault", "seed", "detail")
		for _, c := range r.Cells {
			if c.NotRun != "" {
				cells.Row(c.Cell, string(c.Expected), "not run: "+c.NotRun)
				continue
			}
			yes := ""
			if c.Caught {
				yes = "**yes**"
			}
			cells.Row(c.Cell, string(c.Expected), string(c.Verdict), string(c.Unmutated), yes,
				strconv.Itoa(c.Sections), strconv.Itoa(c.Grants), strconv.FormatInt(c.Seed, 10), c.Detail)
		}
		b.WriteString(cells.String())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Reproduce one run: `%s=MUTANT go run -tags %s ./cmd/bench check -impl LOCK -scenario SCENARIO [-fencing] -ttl %v -sections %d -seed SEED`.\n", mutant.EnvVar, mutant.Tag, ttl, sections)
	return os.WriteFile(filepath.Join(dir, "mutants.md"), []byte(b.String()), 0o644)
}
