package site

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// frontPage is index.html: the verdict matrix (a table per topology), the
// benchmark's targets and charts, the explore table and the mutation table.
type frontPage struct {
	page
	Scenarios []string       // the matrix's scenarios, in the order its tables' columns take within a family
	Grids     []topologyGrid // the matrix, a table per topology
	Families  []family       // the column groups, for the legend
	Cells     int
	Differing []gridEntry // the cells whose verdict is not the expected one
	Bench     *benchView
	Explore   *exploreView
	Mutants   []mutantRow
	HasMutant bool
}

type gridEntry struct {
	Name   string // the cell, as the matrix names it
	Fenced bool
	// Profile labels a cell run under another profile than fast
	// ("production: "); empty for a fast one.
	Profile string
	V       verdictView
	Href    string
	Summary string // the tooltip: expectation and agreement
	// Exercised is the cell's runs that exercised the fault, as its
	// verdict's text says them ("(3 of 3 exercised)"), or "".
	Exercised string
	// FewerExercised: not every run exercised the fault, so the front
	// page's tables say Exercised too (the tooltip and the lock's page
	// always do).
	FewerExercised bool
}

// columns orders the matrix's scenarios as the README's table does (the
// lessons' key scenarios), then the rest in the order the matrix ran them.
func columns(m []record.Cell, key []string) []string {
	var seen []string
	for _, c := range m {
		if !slices.Contains(seen, c.Scenario) {
			seen = append(seen, c.Scenario)
		}
	}
	var out []string
	for _, s := range key {
		if slices.Contains(seen, s) {
			out = append(out, s)
		}
	}
	for _, s := range seen {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func buildFront(r *Results, l links, p page, o Options) frontPage {
	f := frontPage{page: p, Scenarios: columns(r.Matrix, o.KeyScenarios), Cells: len(r.Matrix)}
	f.Grids = buildGrids(r, l, p.Path, f.Scenarios, o)
	f.Families = families
	for _, c := range r.Matrix {
		if e := newGridEntry(r, l, p.Path, c); !e.V.Agrees {
			f.Differing = append(f.Differing, e)
		}
	}
	if r.Bench != nil {
		b := buildBench(r.Bench, l, p.Path)
		f.Bench = &b
	}
	if r.Explore != nil {
		x := buildExplore(r.Explore, l, p.Path, "")
		f.Explore = &x
	}
	f.HasMutant = r.Mutants != nil
	f.Mutants = buildMutants(r.Mutants, l, p.Path, "")
	return f
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// benchView is the benchmark's targets, what the guest protocol costs,
// and its charts.
type benchView struct {
	Date, Command string
	Targets       []targetRow
	Overhead      []overheadRow
	Charts        []chart
}

// overheadRow is one of bench.json's protocol_overhead rows: a guest that
// wraps a lock of the lab's own, beside that lock called natively.
type overheadRow struct {
	Guest, GuestHref, Native, NativeHref, Workload string
	GuestPairs, NativePairs, Ratio                 string
}

// overheadRows are the rows of b's Overhead that name impl as the guest or
// the lock it wraps, or all of them for impl "".
func overheadRows(b *record.Bench, l links, from, impl string) []overheadRow {
	var out []overheadRow
	for _, o := range b.Overhead {
		if impl != "" && o.Guest != impl && o.Native != impl {
			continue
		}
		out = append(out, overheadRow{Guest: o.Guest, GuestHref: l.page(from, lockPage(o.Guest)),
			Native: o.Native, NativeHref: l.page(from, lockPage(o.Native)), Workload: o.Workload,
			GuestPairs: stat(o.GuestPairs), NativePairs: stat(o.NativePairs), Ratio: stat(o.Ratio) + "×"})
	}
	return out
}

type targetRow struct {
	Name, Impl, ImplHref, Peer, Workload string
	Want, Measured, Met, Reach, Note     string
	Short                                bool
}

type chart struct{ Name, Src string }

func buildBench(b *record.Bench, l links, from string) benchView {
	v := benchView{Date: b.Date, Command: b.Command, Overhead: overheadRows(b, l, from, "")}
	for _, t := range b.Targets {
		want := "≥ "
		if t.AtMost {
			want = "≤ "
		}
		v.Targets = append(v.Targets, targetRow{Name: t.Name, Impl: t.Impl, ImplHref: l.page(from, lockPage(t.Impl)),
			Peer: t.Peer, Workload: t.Workload, Want: want + figure(t.Want), Measured: stat(t.Ratio),
			Met: t.Met, Short: strings.HasPrefix(t.Met, "short"), Reach: t.Reach, Note: t.Note})
	}
	for _, c := range b.Charts {
		v.Charts = append(v.Charts, chart{Name: strings.TrimSuffix(c, ".svg"), Src: l.result(from, c)})
	}
	return v
}

// stat is a median with its interval, as the benchmark's report writes it.
func stat(s record.Stat) string {
	if s.CILo != nil && s.CIHi != nil {
		return fmt.Sprintf("%s [%s, %s]", figure(s.Median), figure(*s.CILo), figure(*s.CIHi))
	}
	return figure(s.Median)
}

// figure prints a number with three significant digits, or as a whole
// number when it is large.
func figure(x float64) string {
	if x >= 1000 || x <= -1000 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// exploreView is explore.json's table.
type exploreView struct {
	Seed     int64
	TTL      string
	Clients  int
	Duration string
	Note     string
	Rows     []exploreRow
}

type exploreRow struct {
	Impl, ImplHref, Variant, Skipped string
	Verdict                          checker.Verdict
	Class                            string
	Sections, Unknown, Faults        int
	Injected, Detail                 string
	Minimal                          string
	Replays                          string
	Reproduced                       bool
	HasReplays                       bool
	Timeline, Schedule, History      string
	// ReplayHistories link the histories of replays that did not fail,
	// so a reader can see what the replay did instead.
	ReplayHistories []replayLink
	// StuckFirst names the seeds that found the lock stuck before the
	// row's seed found it unsafe.
	StuckFirst string
}

// replayLink is one replay's history, numbered as bench explore names it.
type replayLink struct {
	N    int
	Href string
}

// buildExplore renders the explore table; only, when set, keeps one lock's rows.
func buildExplore(x *record.ExploreTable, l links, from, only string) exploreView {
	v := exploreView{Seed: x.Seed, TTL: x.TTL, Clients: x.Clients, Duration: x.Duration, Note: x.Note}
	dir := func(f string) string {
		if f == "" {
			return ""
		}
		return l.result(from, "explore/"+f)
	}
	for _, r := range x.Rows {
		if only != "" && r.Impl != only {
			continue
		}
		row := exploreRow{Impl: r.Row(), ImplHref: l.page(from, lockPage(r.Impl)), Skipped: r.Skipped,
			Verdict: r.Verdict, Class: verdictClass(r.Verdict), Sections: r.Sections, Unknown: r.Unknown,
			Faults: r.Faults, Injected: strings.Join(record.Tally(r.Injected), ", "), Detail: r.Detail,
			Timeline: dir(r.Timeline), Schedule: dir(r.Schedule), History: dir(r.History)}
		if s := r.NotStruckNote(); s != "" {
			row.Injected += "; " + s
		}
		row.StuckFirst = r.StuckFirst()
		for i, h := range r.ReplayHistories {
			row.ReplayHistories = append(row.ReplayHistories, replayLink{N: i + 1, Href: dir(h)})
		}
		// A fenced table's rows sit beside the unfenced ones of the same
		// topology on the site: the variant tells them apart.
		var variant []string
		if r.Fenced {
			variant = append(variant, "fenced")
		}
		if r.Fixed != "" {
			variant = append(variant, "fixed "+r.Fixed)
		}
		if len(r.Without) > 0 {
			variant = append(variant, "without "+strings.Join(r.Without, ", "))
		}
		row.Variant = strings.Join(variant, "; ")
		if r.Schedule != "" {
			row.Minimal = fmt.Sprintf("%d fault(s) in %s", r.MinimalFaults, r.MinimalDuration)
			if r.ShrinkOutOfTime {
				row.Minimal += " (shrinking ran out of time)"
			}
		}
		if len(r.Replays) > 0 {
			var rs []string
			for _, v := range r.Replays {
				rs = append(rs, string(v))
			}
			row.Replays, row.HasReplays = strings.Join(rs, ", "), true
			row.Reproduced = checker.Reproduced(r.Verdict, r.Replays...)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// mutantRow is one mutant and what caught it. Caught is the mutants
// command's record of checker.Caught, not decided here.
type mutantRow struct {
	Mutant, Lock, LockHref, Breaks, Catcher string
	Caught                                  bool
	CaughtBy                                string
	Run, NotRun                             int
}

func buildMutants(ms []record.Mutant, l links, from, only string) []mutantRow {
	var out []mutantRow
	for _, m := range ms {
		if only != "" && m.Lock != only {
			continue
		}
		row := mutantRow{Mutant: m.Mutant, Lock: m.Lock, LockHref: l.page(from, lockPage(m.Lock)), Breaks: m.Breaks,
			Catcher: m.Catcher, Caught: m.Caught, CaughtBy: strings.Join(m.CaughtBy, ", ")}
		for _, c := range m.Cells {
			if c.NotRun != "" {
				row.NotRun++
			} else {
				row.Run++
			}
		}
		out = append(out, row)
	}
	return out
}

// implOrder lists the matrix's locks in the order it ran them (a lock's
// page holds its cells on every topology).
func implOrder(m []record.Cell) []string {
	var out []string
	for _, c := range m {
		if !slices.Contains(out, c.Impl) {
			out = append(out, c.Impl)
		}
	}
	return out
}

// pagedLocks are the locks that get a page: every lock a page links, the
// matrix's in its order, then those only the benchmark, explore or the
// mutation run name (a lock newer than the committed matrix is measured
// before it is judged, and its page shows its speed alone).
func pagedLocks(r *Results) []string {
	out := implOrder(r.Matrix)
	add := func(name string) {
		if impl := record.ImplOf(name); impl != "" && !slices.Contains(out, impl) {
			out = append(out, impl)
		}
	}
	if r.Bench != nil {
		for _, b := range r.Bench.Impls {
			add(b.Name)
		}
		for _, t := range r.Bench.Targets {
			add(t.Impl)
		}
		for _, o := range r.Bench.Overhead {
			add(o.Guest)
			add(o.Native)
		}
	}
	if r.Explore != nil {
		for _, row := range r.Explore.Rows {
			add(row.Impl)
		}
	}
	for _, m := range r.Mutants {
		add(m.Lock)
	}
	return out
}
