package lessons

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
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

// Deployment is one column of the decision table beyond the single
// server: a production topology (or two that differ only in their
// database) and the worst verdict of every cell a lock has there.
type Deployment struct {
	Name       string
	Topologies []string
}

// Deployments are the production topologies the matrix runs, in reading
// order; a topology none claims gets a column of its own, named by it.
var Deployments = []Deployment{
	{"Sentinel fail-over", []string{"redis-sentinel"}},
	{"Sentinel, min-replicas", []string{"redis-sentinel-min-replicas"}},
	{"Redis Cluster", []string{"redis-cluster"}},
	{"ZooKeeper ensemble", []string{"zk-ensemble"}},
	{"etcd cluster", []string{"etcd-cluster"}},
	{"idle sessions ended", []string{"pg-idle-timeouts", "mysql-wait-timeout"}},
	{"async replica fail-over", []string{"pg-replica-async", "mysql-replica-async"}},
	{"sync replica fail-over", []string{"pg-replica-sync", "mysql-replica-semisync"}},
}

// familyHeading reports whether a table heading is a decision column.
func familyHeading(h string) bool {
	for _, f := range Families {
		if f.Name == h {
			return true
		}
	}
	for _, d := range Deployments {
		if d.Name == h {
			return true
		}
	}
	return false
}

// deploymentColumns are the Deployments that have a cell in the matrix,
// then, sorted, every other topology but the single one as a column of
// its own.
func deploymentColumns(m Matrix) []Deployment {
	present := map[string]bool{}
	for _, c := range m {
		if t := topology.Or(c.Topology); t != topology.SingleName {
			present[t] = true
		}
	}
	claimed := map[string]bool{}
	var out []Deployment
	for _, d := range Deployments {
		has := false
		for _, t := range d.Topologies {
			claimed[t] = true
			has = has || present[t]
		}
		if has {
			out = append(out, d)
		}
	}
	for _, t := range sortedKeys(present) {
		if !claimed[t] {
			out = append(out, Deployment{Name: t, Topologies: []string{t}})
		}
	}
	return out
}

// deploymentVerdict is a lock's verdict on a deployment, with or without
// fencing: the worst of every cell it has on the deployment's topologies
// (checker.CellVerdict), naming the scenarios that gave it.
func deploymentVerdict(m Matrix, impl string, d Deployment, fenced bool) (string, bool) {
	var vs []checker.Verdict
	from := map[checker.Verdict][]string{}
	cells := map[checker.Verdict][]record.Cell{}
	for _, c := range m {
		if c.Impl != impl || c.Fencing != fenced || !slices.Contains(d.Topologies, topology.Or(c.Topology)) {
			continue
		}
		vs = append(vs, c.Verdict)
		from[c.Verdict] = appendString(from[c.Verdict], c.Scenario)
		cells[c.Verdict] = append(cells[c.Verdict], c)
	}
	if len(vs) == 0 {
		return "", false
	}
	v := checker.CellVerdict(vs)
	out := verdictWithCount(v, cells[v])
	// Where every cell agrees there is nothing to point at; otherwise the
	// scenarios that gave the worst verdict are the ones to read.
	if len(cells[v]) < len(vs) {
		sort.Strings(from[v])
		out += " <sub>" + strings.Join(from[v], ", ") + "</sub>"
	}
	return out, true
}

// verdictWithCount is a verdict as the decision table shows it: a safe or
// not-exercised verdict says how many of its cells' runs exercised the
// fault where the matrix records it (record.Cell.VerdictText), summed
// over the cells that gave it.
func verdictWithCount(v checker.Verdict, cells []record.Cell) string {
	if !checker.RestsOnExercise(v) {
		return string(v)
	}
	ex, runs := 0, 0
	for _, c := range cells {
		ex += c.ExercisedRuns
		runs += c.Runs
	}
	// A matrix older than the exercised count records none: a safe cell
	// there says nothing of it, and a not-exercised one cannot exist.
	if ex == 0 && checker.Survived(v) {
		return string(v)
	}
	return record.Cell{Verdict: v, ExercisedRuns: ex, Runs: runs}.VerdictText()
}

// DecisionPage is the page the decision table is generated on, the last
// in reading order but for the follow-ups of AfterDecision.
const DecisionPage = "18-choosing-a-lock.md"

// AfterDecision are the pages that follow the decision page: each goes
// deeper into rows of its table under faults added after it was written;
// numbering them after it keeps the decision page's file, which the
// project README links, where it is.
var AfterDecision = []string{SyncReplicationPage}

// GuestPage is the lesson on the guest locks, which the decision table
// links a guest's row to.
const GuestPage = "16-guest-locks.md"

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
	cells := map[checker.Verdict][]record.Cell{}
	lessonRun := false
	for _, s := range f.Scenarios {
		found := false
		if c, ok := m.findOn(impl, topo, s, fenced); ok {
			vs = append(vs, c.Verdict)
			from[c.Verdict] = append(from[c.Verdict], s)
			cells[c.Verdict] = append(cells[c.Verdict], c)
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
	if len(cells[v]) > 0 {
		out = verdictWithCount(v, cells[v])
	}
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
const DecisionRule = "Each fault column is a family of the pages' scenarios on the single server and shows the worst verdict of its scenarios " +
	"in the checker's order (unsafe, [unknown](glossary.md#unknown), [stuck](glossary.md#stuck), [inconclusive](glossary.md#inconclusive), " +
	"[not exercised](glossary.md#danger-window), [unavailable](glossary.md#unavailable), safe; [n/a](glossary.md#n-a) only when every one is), naming the scenario that gave it when the family has several; " +
	"`fenced:` is the same with `-fencing`. A verdict marked *lesson run* comes from a page's run, where the matrix has no cell " +
	"(the coupon sale, which repeats `pause-past-ttl` and so is no matrix column, and a lock added since the matrix last ran). · means no cell."

// DecisionDeploymentRule is stated once on the decision page, before the
// columns it explains.
func DecisionDeploymentRule(cols []Deployment) string {
	var parts []string
	for _, d := range cols {
		var ts []string
		for _, t := range d.Topologies {
			ts = append(ts, "`"+t+"`")
		}
		parts = append(parts, fmt.Sprintf("*%s* (%s)", d.Name, strings.Join(ts, ", ")))
	}
	return "The columns after the single server's are the production topologies the matrix runs, one each: " + strings.Join(parts, "; ") +
		". Each shows the worst verdict of every cell the lock has there, whatever its fault, naming the scenarios that gave it where the cells differ; " +
		"a safe or not-exercised verdict says how many of those cells' runs [exercised](glossary.md#danger-window) the fault where the matrix records it. " +
		"A lock is only as safe as the worst column of the deployment you run."
}

// decisionTable is the choosing page's table: for every lock, whether it
// issues fencing tokens, the verdict of every fault family on the single
// server, the worst verdict on every production topology, its recovery
// after a holder crash and what it costs. m is the single server's
// cells, others every other topology's.
func decisionTable(m Matrix, others Topologies, mErr error, mSet string, recs map[string]Record, b *Bench, bErr error) string {
	var s strings.Builder
	deps := deploymentColumns(others.Cells)
	if mErr != nil {
		s.WriteString(missingMatrix + "\n\n")
	} else {
		s.WriteString("Verdicts and [recovery](glossary.md#recovery) times from `results/correctness.json`. " + mSet + " " + DecisionRule + " " +
			DecisionDeploymentRule(deps) + " " + DecisionRecoveryRule + " " + struckLateRule(m) + "\n\n")
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
	head := []string{"implementation", "backend", "fencing tokens"}
	for _, c := range cols {
		head = append(head, c.Name)
	}
	for _, d := range deps {
		head = append(head, d.Name)
	}
	head = append(head, "recovery", "uncontended pairs/s", "contended pairs/s")
	table := report.NewTable(head...)
	for _, spec := range impls.All() {
		name := fmt.Sprintf("`%s`", spec.Name)
		if l := lessonPage(spec.Name); l != "" {
			name = fmt.Sprintf("[`%s`](%s)", spec.Name, l)
		}
		if spec.Broken != "" {
			name += " (broken)"
		}
		switch {
		case spec.Guest:
			name += " ([guest](glossary.md#guest))"
		case spec.Peer:
			name += " ([peer](glossary.md#peer))"
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
		row := []string{name, backend(spec), yesNo(spec.Caps.Fencing)}
		has := false
		for _, c := range cols {
			cell := verdictCell(func(fenced bool) (string, bool) {
				return familyVerdict(m, recs, spec.Name, topology.SingleName, c, fenced)
			})
			has = has || cell != "·"
			row = append(row, cell)
		}
		for _, d := range deps {
			cell := verdictCell(func(fenced bool) (string, bool) {
				return deploymentVerdict(others.Cells, spec.Name, d, fenced)
			})
			has = has || cell != "·"
			row = append(row, cell)
		}
		if !has {
			continue
		}
		rec := "·"
		if c, ok := m.findOn(spec.Name, topology.SingleName, "holder-crash", false); ok {
			if med, ok := medianRecovery(c); ok {
				rec = fmt.Sprintf("%d ms", med)
				if struckLate(spec, c, med) {
					rec = fmt.Sprintf("[struck late](glossary.md#danger-window): %d ms", med)
				}
			}
		}
		table.Row(append(row, rec, un, co)...)
	}
	s.WriteString(table.String())
	return s.String()
}

// struckLate reports whether a holder-crash cell's median recovery says
// the kill came too late in the lease to test the lock
// (checker.StruckTooLate): a lock that frees a dead holder's claim only
// by its lease, counted from its grant (engine.LeaseFromGrant), frees it
// no sooner than the lease ends, so a recovery under the checker's share
// of the TTL is the rest of a lease the lab had nearly used up before the
// kill, not the lock's.
func struckLate(spec impls.Spec, c record.Cell, median int64) bool {
	ttl, err := time.ParseDuration(c.TTL)
	if err != nil || !engine.LeaseFromGrant(spec) {
		return false
	}
	return time.Duration(median)*time.Millisecond < ttl/checker.TooLateShare
}

// struckLateRule says what the recovery column's *struck late* means,
// with the share and the matrix's TTL it is read against.
func struckLateRule(m Matrix) string {
	ttl := "the TTL"
	for _, c := range m {
		if c.TTL != "" {
			ttl = "the " + c.TTL + " TTL"
			break
		}
	}
	return fmt.Sprintf("A lock whose lease runs from its grant and frees a dead holder's claim only when it ends cannot free it sooner, so its recovery is at least what was left of the lease at the kill: "+
		"a median under 1/%d of %s is marked *struck late*, since the kill came with less than that left, the share under which the checker holds a crash to have tested nothing (`checker.StruckTooLate`); "+
		"the figure then times the lab's delay before the kill, not the lock.", checker.TooLateShare, ttl)
}
