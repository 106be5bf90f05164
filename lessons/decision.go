package lessons

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/report"
	"github.com/locklab/locklab/topology"
)

// The decision page comes last and sums up every fault the pages teach. Its
// columns are fault families, each the worst verdict of its scenarios, so
// a scenario added to the matrix lands in its family's column, or in a
// column of its own when no family claims it, and a topology other than
// the single server adds rows: no hand edit.

// Family is one column of the decision table: the scenarios it sums up.
type Family struct {
	Name      string
	Scenarios []string
}

// Families are the fault families the pages teach, in reading order.
var Families = []Family{
	{"contention", []string{"contention"}},
	{"holder crash", []string{"holder-crash", "crash-after-setnx"}},
	{"release after a pause", []string{"late-release"}},
	{"pause past TTL", []string{"pause-past-ttl"}},
	{"slow work past TTL", []string{"slow-work-past-ttl"}},
	{"clock", []string{"client-clock-skew", "redlock-clock-jump"}},
	{"lock server lost", []string{"server-restart", "redis-failover", "redlock-restart", "redlock-restart-delayed"}},
	{"partition", []string{"holder-partition", "redlock-partition"}},
	{"waiting and queues", []string{"release-hand-off", "queued-waiter-crash", "queued-waiter-pause"}},
	{"re-entry", []string{"re-entry"}},
	{"coupon sale", []string{"coupon"}},
}

// familyHeading reports whether a table heading is a decision column.
func familyHeading(h string) bool {
	for _, f := range Families {
		if f.Name == h {
			return true
		}
	}
	return false
}

// DecisionPage is the page the decision table is generated on, the last
// in reading order.
const DecisionPage = "15-choosing-a-lock.md"

// topologies lists the matrix's topologies, the single server first.
func topologies(m Matrix) []string {
	out := []string{topology.SingleName}
	var rest []string
	for _, c := range m {
		if t := topology.Or(c.Topology); !slices.Contains(out, t) && !slices.Contains(rest, t) {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// decisionColumns are the families that have a cell in the matrix or a run
// on a page, then, sorted, every scenario no family claims.
func decisionColumns(m Matrix, recs map[string]Record) []Family {
	present := map[string]bool{}
	for _, c := range m {
		present[c.Scenario] = true
	}
	for _, r := range recs {
		// The decision table is the single topology's, as the matrix
		// it reads; a page's run on another says nothing of it.
		if topology.Or(r.Topology) == topology.SingleName {
			present[r.Scenario] = true
		}
	}
	claimed := map[string]bool{}
	var out []Family
	for _, f := range Families {
		has := false
		for _, s := range f.Scenarios {
			claimed[s] = true
			has = has || present[s]
		}
		if has {
			out = append(out, f)
		}
	}
	var rest []string
	for s := range present {
		if !claimed[s] {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	for _, s := range rest {
		out = append(out, Family{Name: s, Scenarios: []string{s}})
	}
	return out
}

// familyVerdict is a lock's verdict for a family on one topology, with or
// without fencing: the worst of its scenarios' cells (checker.CellVerdict,
// the rule a cell's runs are summed by), naming the scenario that gave it
// when the family has several. A scenario the matrix has no column for
// (coupon) is read from the pages' runs, and says so.
func familyVerdict(m Matrix, recs map[string]Record, impl, topo string, f Family, fenced bool) (string, bool) {
	var vs []checker.Verdict
	from := map[checker.Verdict][]string{}
	lessonRun := false
	for _, s := range f.Scenarios {
		found := false
		if c, ok := m.findOn(impl, topo, s, fenced); ok {
			vs = append(vs, c.Verdict)
			from[c.Verdict] = append(from[c.Verdict], s)
			found = true
		}
		if found || topo != topology.SingleName {
			continue
		}
		for _, id := range sortedRecordIDs(recs) {
			r := recs[id]
			if r.Impl == impl && topology.Or(r.Topology) == topology.SingleName && r.Scenario == s && r.Fencing == fenced {
				vs = append(vs, r.Verdict)
				from[r.Verdict] = append(from[r.Verdict], s)
				lessonRun = true
				break
			}
		}
	}
	if len(vs) == 0 {
		return "", false
	}
	v := checker.CellVerdict(vs)
	out := string(v)
	if len(f.Scenarios) > 1 && len(vs) > 1 {
		out += " <sub>" + strings.Join(from[v], ", ") + "</sub>"
	}
	if lessonRun {
		out += " <sub>lesson run</sub>"
	}
	return out, true
}

func sortedRecordIDs(recs map[string]Record) []string {
	var ids []string
	for id := range recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// DecisionRule is stated once on the decision page.
const DecisionRule = "Each fault column is a family of the pages' scenarios and shows the worst verdict of its scenarios " +
	"in the checker's order (unsafe, unknown, stuck, inconclusive, unavailable, safe; n/a only when every one is), naming the scenario that gave it when the family has several; " +
	"`fenced:` is the same with `-fencing`. A verdict marked *lesson run* comes from a page's run, where the matrix has no cell " +
	"(the coupon sale, which repeats `pause-past-ttl` and so is no matrix column, and a lock added since the matrix last ran). · means no cell."

// decisionTable is the choosing page's table: for every lock and topology,
// whether it issues fencing tokens, the verdict of every fault family, its
// recovery after a holder crash and what it costs.
func decisionTable(m Matrix, mErr error, mSet string, recs map[string]Record, b *Bench, bErr error) string {
	var s strings.Builder
	if mErr != nil {
		s.WriteString(missingMatrix + "\n\n")
	} else {
		s.WriteString("Verdicts and [recovery](glossary.md#recovery) times from `results/correctness.json`. " + mSet + " " + DecisionRule + " " + DecisionRecoveryRule + "\n\n")
	}
	if bErr != nil {
		s.WriteString(missingBench + "\n\n")
	} else {
		fmt.Fprintf(&s, "Rates from `results/bench.json`, measured %s (medians over trials; [pairs/s](glossary.md#pairs-per-s)). %s\n\n", b.Date, benchSettings(b))
	}
	if mErr != nil && bErr != nil {
		return s.String()
	}
	cols := decisionColumns(m, recs)
	topoList := topologies(m)
	head := []string{"implementation", "backend", "fencing tokens"}
	showTopo := len(topoList) > 1
	if showTopo {
		head = append(head, "topology")
	}
	for _, c := range cols {
		head = append(head, c.Name)
	}
	head = append(head, "recovery", "uncontended pairs/s", "contended pairs/s")
	table := report.NewTable(head...)
	for _, spec := range impls.All() {
		name := fmt.Sprintf("`%s`", spec.Name)
		if l := PageFor(spec.Name); l != "" {
			name = fmt.Sprintf("[`%s`](%s)", spec.Name, l)
		}
		if spec.Broken != "" {
			name += " (broken)"
		}
		if spec.Peer {
			name += " (peer)"
		}
		un, co := "·", "·"
		if bErr == nil {
			if r, ok := findBench(b, spec.Name); ok {
				if r.Uncontended != nil {
					un = num(r.Uncontended.PairsPerSec.Median)
				}
				if r.Contended != nil {
					co = num(r.Contended.PairsPerSec.Median)
				}
			}
		}
		for _, topo := range topoList {
			row := []string{name, backend(spec), yesNo(spec.Caps.Fencing)}
			if showTopo {
				row = append(row, topo)
			}
			has := false
			for _, c := range cols {
				cell := verdictCell(func(fenced bool) (string, bool) {
					return familyVerdict(m, recs, spec.Name, topo, c, fenced)
				})
				has = has || cell != "·"
				row = append(row, cell)
			}
			if !has {
				continue
			}
			rec := "·"
			if c, ok := m.findOn(spec.Name, topo, "holder-crash", false); ok {
				if med, ok := medianRecovery(c); ok {
					rec = fmt.Sprintf("%d ms", med)
				}
			}
			table.Row(append(row, rec, un, co)...)
		}
	}
	s.WriteString(table.String())
	return s.String()
}
