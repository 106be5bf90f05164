package lessons

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
)

// A sentence that says two locks are "inside the noise" of each other, or
// that one is ahead, rests on the 95 % interval of each median, and the
// benchmark tables print only the trials' [min–max]: a learner could not
// see the interval a claim meant (lesson 8 called a difference "most of
// the difference" between two locks whose intervals overlap). A page that
// compares locks declares the pairs (Page.Compare), the generator prints
// each pair's medians with their intervals in the page's noise block,
// beside the sentence, and TestPagesShowTheIntervalsTheyClaim fails on a
// comparison the page makes without declaring it.

// Comparison is two locks whose speed a page's prose compares.
type Comparison struct {
	A, B string
	// Metrics names the figures compared (benchMetric names); empty means
	// both pairs/s figures, uncontended and contended.
	Metrics []string
}

// noiseMetrics are the figures a comparison block can show, by name.
var noiseMetrics = []benchMetric{uncontendedMetric, contendedMetric, handoffMetric}

func (c Comparison) metrics() []benchMetric {
	if len(c.Metrics) == 0 {
		return []benchMetric{uncontendedMetric, contendedMetric}
	}
	var out []benchMetric
	for _, n := range c.Metrics {
		for _, m := range noiseMetrics {
			if m.name == n {
				out = append(out, m)
			}
		}
	}
	return out
}

// shows reports whether the comparison prints locks a and b (either
// order) on metric m.
func (c Comparison) shows(a, b string, m benchMetric) bool {
	if !(c.A == a && c.B == b) && !(c.A == b && c.B == a) {
		return false
	}
	for _, cm := range c.metrics() {
		if cm.name == m.name {
			return true
		}
	}
	return false
}

// interval95 is a figure's 95 % interval of the median as bench.json
// carries it; a figure written without one (an older report) has it
// computed here from its per-trial values by the benchmark's own method.
// ok is false when the trials are too few for a finite interval.
func interval95(s record.Stat) (lo, hi float64, ok bool) {
	if s.CILo != nil && s.CIHi != nil {
		return *s.CILo, *s.CIHi, true
	}
	if len(s.Trials) > 0 {
		if c := benchmark.NewStat(s.Trials); c.CILo != nil && c.CIHi != nil {
			return *c.CILo, *c.CIHi, true
		}
	}
	return 0, 0, false
}

// noiseBlock prints every comparison of a page: each lock's median with
// its 95 % interval, and whether the intervals overlap.
func noiseBlock(p Page, b *Bench, bErr error) string {
	if bErr != nil {
		return missingBench
	}
	var s strings.Builder
	fmt.Fprintf(&s, "From `results/bench.json` (measured %s by `%s`), the figures the sentences above compare: each median with its [95 %% interval](glossary.md#95-interval). Two locks differ beyond the noise only where their intervals do not overlap.\n\n", b.Date, b.Command)
	t := report.NewTable("figure", "lock", "median [95 % interval]", "lock", "median [95 % interval]", "the intervals")
	cellOf := func(m benchMetric, lock string) (string, record.Stat, bool) {
		r, ok := findBench(b, lock)
		if !ok {
			return "not measured", record.Stat{}, false
		}
		st, ok := m.get(r)
		if !ok {
			return "not measured", record.Stat{}, false
		}
		unit := ""
		if m.lower {
			unit = " ms"
		}
		if lo, hi, ok := interval95(st); ok {
			return fmt.Sprintf("%s%s [%s–%s]", num(st.Median), unit, num(lo), num(hi)), st, true
		}
		return fmt.Sprintf("%s%s (too few trials for an interval; trials [%s–%s])", num(st.Median), unit, num(st.Min), num(st.Max)), st, true
	}
	for _, c := range p.Compare {
		for _, m := range c.metrics() {
			a, as, aok := cellOf(m, c.A)
			bb, bs, bok := cellOf(m, c.B)
			verdict := "–"
			if aok && bok {
				switch better(m, as, bs) {
				case 0:
					verdict = "overlap: inside the noise"
				case 1:
					verdict = fmt.Sprintf("apart: `%s` ahead", c.A)
				default:
					verdict = fmt.Sprintf("apart: `%s` ahead", c.B)
				}
			}
			t.Row(m.name, "`"+c.A+"`", a, "`"+c.B+"`", bb, verdict)
		}
	}
	s.WriteString(t.String())
	return s.String()
}

// IntervalShownProblems lists the comparisons of two locks a page's prose
// makes (the clauses BenchClaimProblems holds) that the page's noise
// block does not print, so a learner could not see the intervals the
// sentence rests on. Superlatives, which compare one lock with every
// other, are the decision table's.
func IntervalShownProblems(page string, p Page) []string {
	var out []string
	for _, bc := range benchClauses(page) {
		if bc.superl || len(bc.locks) < 2 {
			continue // a superlative is the decision table's; a clause naming fewer than two fails BenchClaimProblems
		}
		for _, other := range bc.locks[1:] {
			for _, m := range bc.metrics {
				shown := false
				for _, c := range p.Compare {
					shown = shown || c.shows(bc.locks[0], other, m)
				}
				if !shown {
					out = append(out, fmt.Sprintf("%q: compares %s with %s on %s, and the page does not show their 95 %% intervals: add {%q, %q} to its Compare in lessons/pages.go and a <!-- generated:noise --> block beside the sentence",
						bc.text, bc.locks[0], other, m.name, bc.locks[0], other))
				}
			}
		}
	}
	if len(p.Compare) > 0 && !strings.Contains(page, "<!-- generated:noise -->") {
		out = append(out, "declares comparisons but has no <!-- generated:noise --> block to print them")
	}
	return out
}
