package site

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// The front page reads the matrix by topology: one table per topology,
// with only the locks it carries as rows and only the scenarios run on it
// as columns, the columns grouped by fault family. The whole matrix in
// one table is 31 scenarios wide and its rows are mostly empty, since
// most scenarios run on one topology; a person choosing a lock asks
// "on my servers, what breaks it?", and a topology's own table answers
// that without the holes.

// family is a group of fault columns: the scenarios whose fault puts the
// lock at risk by the same rule (checker.Risk, declared by each scenario),
// so a new scenario lands in its family with no line here.
type family struct {
	Risk checker.Risk
	Name string
	What string
}

// families are the column groups, in reading order: no fault, then what
// a client does, then what the servers do. A scenario whose rule is none
// of these (or that the registry does not know) is in otherFamily.
var families = []family{
	{checker.RiskContention, "no fault", "clients contend and nothing fails"},
	{checker.RiskRecovery, "a client dies or waits", "a holder or a waiter crashes or stalls: does the lock free for the others?"},
	{checker.RiskAtExpiry, "the holder stalls", "the holder pauses, is cut off or works too long: its lease runs out while it still acts"},
	{checker.RiskAtStrike, "the servers lose the lock", "a restart, a fail-over, a split or a session ended: the servers' state is replaced while a holder acts"},
}

var otherFamily = family{Name: "other faults", What: "scenarios that declare no rule for when their fault puts the lock at risk"}

// familyOf is the family of a scenario's risk rule, and its place in
// reading order.
func familyOf(risk checker.Risk, known bool) (family, int) {
	if known {
		for i, f := range families {
			if f.Risk == risk {
				return f, i
			}
		}
	}
	return otherFamily, len(families)
}

// topologyGrid is one topology's table.
type topologyGrid struct {
	Name    string
	ID      string // the table's anchor on the front page
	Summary string // the topology's own (topology.Named.Summary)
	Heads   []familyHead
	Columns []string // scenarios, grouped by family
	Rows    []gridRow
	Cells   int
}

// familyHead spans a family's columns.
type familyHead struct {
	Name, What string
	Span       int
}

// gridRow is a lock on the topology: its cells per column (without
// fencing, then with), and how many of its cells that say anything about
// it (checker.Applicable) it survived (checker.Survived).
type gridRow struct {
	Impl, LockHref   string
	Columns          [][]gridEntry
	Survived, Judged int
}

// topologyOrder lists the matrix's topologies, the single one first, the
// others in the order the matrix ran them.
func topologyOrder(m []record.Cell) []string {
	out := []string{topology.SingleName}
	for _, c := range m {
		if t := topology.Or(c.Topology); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if !slices.ContainsFunc(m, func(c record.Cell) bool { return topology.Or(c.Topology) == topology.SingleName }) {
		out = out[1:]
	}
	return out
}

// gridID is a topology's anchor on the front page.
func gridID(topo string) string { return "on-" + topo }

// buildGrids makes a table per topology of the matrix, its columns in the
// order of order (the front page's scenario order) within each family.
func buildGrids(r *Results, l links, from string, order []string, o Options) []topologyGrid {
	type col struct {
		name string
		fam  family
		rank int
	}
	var out []topologyGrid
	for _, topo := range topologyOrder(r.Matrix) {
		g := topologyGrid{Name: topo, ID: gridID(topo)}
		if t, err := topology.Lookup(topo); err == nil {
			g.Summary = t.Summary
		}
		var cells []record.Cell
		var cols []col
		var impls []string
		for _, c := range r.Matrix {
			if topology.Or(c.Topology) != topo {
				continue
			}
			cells = append(cells, c)
			if !slices.Contains(impls, c.Row()) {
				impls = append(impls, c.Row())
			}
			if slices.ContainsFunc(cols, func(x col) bool { return x.name == c.Scenario }) {
				continue
			}
			risk, known := scenarioRisk(c, o)
			f, rank := familyOf(risk, known)
			cols = append(cols, col{c.Scenario, f, rank})
		}
		slices.SortStableFunc(cols, func(a, b col) int {
			if a.rank != b.rank {
				return a.rank - b.rank
			}
			return slices.Index(order, a.name) - slices.Index(order, b.name)
		})
		for _, c := range cols {
			g.Columns = append(g.Columns, c.name)
			if n := len(g.Heads); n > 0 && g.Heads[n-1].Name == c.fam.Name {
				g.Heads[n-1].Span++
				continue
			}
			g.Heads = append(g.Heads, familyHead{Name: c.fam.Name, What: c.fam.What, Span: 1})
		}
		for _, impl := range impls {
			// The table is the topology's: its rows name the lock alone.
			row := gridRow{Impl: record.ImplOf(impl), LockHref: l.page(from, lockPage(impl)), Columns: make([][]gridEntry, len(g.Columns))}
			for _, c := range cells {
				if c.Row() != impl {
					continue
				}
				e := newGridEntry(r, l, from, c)
				i := slices.Index(g.Columns, c.Scenario)
				row.Columns[i] = append(row.Columns[i], e)
				if checker.Applicable(c.Verdict) {
					row.Judged++
				}
				if checker.Survived(c.Verdict) {
					row.Survived++
				}
				g.Cells++
			}
			for _, col := range row.Columns {
				slices.SortStableFunc(col, func(a, b gridEntry) int { return boolCmp(a.Fenced, b.Fenced) })
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}

// scenarioRisk is the rule a cell's scenario declares, as the registry
// (Options.Describe) says; known is false for a scenario it does not know.
func scenarioRisk(c record.Cell, o Options) (risk checker.Risk, known bool) {
	if o.Describe == nil {
		return "", false
	}
	sc, ok := o.Describe(c, o.MatrixTTL)
	return sc.Risk, ok
}

// exercisedNote is what a cell's verdict says of its runs that exercised
// the fault, as record.Cell.VerdictText words it (" (3 of 3 exercised)"
// on a safe or not-exercised cell, nothing on any other), or nothing for
// a cell from a matrix that did not count them.
func exercisedNote(r *Results, c record.Cell) string {
	if r != nil && !r.Counted(c) {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(c.VerdictText(), string(c.Verdict)))
}

// newGridEntry is a cell as a table shows it: its verdict, its exercised
// runs and whether it agrees with the expectation.
func newGridEntry(r *Results, l links, from string, c record.Cell) gridEntry {
	v := newVerdict(c.Verdict, c.Expected)
	agrees := "agrees"
	if !v.Agrees {
		agrees = "differs"
	}
	e := gridEntry{Name: cellName(c), Fenced: c.Fencing, Profile: c.ProfileLabel(), V: v, Href: l.page(from, cellPage(c)),
		Exercised: exercisedNote(r, c)}
	// A table of many columns says the count where it is news: a cell
	// whose runs did not all exercise the fault (every not-exercised one,
	// and a safe one that rests on fewer than all its runs).
	e.FewerExercised = e.Exercised != "" && c.ExercisedRuns < c.Runs
	verdict := string(c.Verdict)
	if e.Exercised != "" {
		verdict += " " + e.Exercised
	}
	e.Summary = fmt.Sprintf("%s: %s, expected %s (%s)", cellName(c), verdict, c.Expected, agrees)
	return e
}
