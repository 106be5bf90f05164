package lessons

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// Matrix is results/correctness.json.
type Matrix []record.Cell

// LoadMatrix reads results/correctness.json.
func LoadMatrix(dir string) (Matrix, error) {
	b, err := os.ReadFile(filepath.Join(dir, "correctness.json"))
	if err != nil {
		return nil, err
	}
	var all Matrix
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("correctness.json: %w", err)
	}
	// The pages teach the single-server topology; a cell on another one
	// (an ensemble) would otherwise answer for the same lock and scenario.
	var m Matrix
	for _, r := range all {
		if topology.Or(r.Topology) == topology.SingleName {
			m = append(m, r)
		}
	}
	return m, nil
}

// Topologies holds the cells of every topology but the single one, and
// the topologies some of whose cells came from a matrix of their own
// rather than from the main one (a page names those files, and only those).
type Topologies struct {
	Cells   Matrix
	OwnFile map[string]bool
}

// LoadTopologies reads the cells of every topology but the single one:
// those in results/correctness.json (a matrix run on every topology), then
// those of results/topologies/NAME/correctness.json that it lacks (`bench
// matrix -topology NAME -out results/topologies/NAME`), each cell's files
// made relative to results/. No such cell is no error: a page's cell of
// another topology then reads as not measured.
func LoadTopologies(dir string) (Topologies, error) {
	out := Topologies{OwnFile: map[string]bool{}}
	key := func(c record.Cell) string { return c.Key() }
	have := map[string]bool{}
	add := func(c record.Cell, own bool) {
		if topology.Or(c.Topology) != topology.SingleName && !have[key(c)] {
			have[key(c)] = true
			out.Cells = append(out.Cells, c)
			if own {
				out.OwnFile[topology.Or(c.Topology)] = true
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "correctness.json")); err == nil {
		var all Matrix
		if err := json.Unmarshal(b, &all); err != nil {
			return Topologies{}, fmt.Errorf("correctness.json: %w", err)
		}
		for _, c := range all {
			add(c, false)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "topologies", "*", "correctness.json"))
	if err != nil {
		return Topologies{}, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return Topologies{}, err
		}
		var cells Matrix
		if err := json.Unmarshal(b, &cells); err != nil {
			return Topologies{}, fmt.Errorf("%s: %w", f, err)
		}
		rel := filepath.ToSlash(filepath.Join("topologies", filepath.Base(filepath.Dir(f))))
		for _, c := range cells {
			for _, p := range []*string{&c.Counterexample, &c.History} {
				if *p != "" {
					*p = rel + "/" + *p
				}
			}
			add(c, true)
		}
	}
	return out, nil
}

// find returns a cell of the single-server topology, the one the pages
// teach with; a page that shows another names it (decisionTable,
// SummaryTable).
func (m Matrix) find(impl, scenario string, fencing bool) (record.Cell, bool) {
	return m.findOn(impl, topology.SingleName, scenario, fencing)
}

// findOn returns a cell of the named topology.
func (m Matrix) findOn(impl, topo, scenario string, fencing bool) (record.Cell, bool) {
	for _, r := range m {
		if r.Impl == impl && topology.Or(r.Topology) == topo && r.Scenario == scenario && r.Fencing == fencing {
			return r, true
		}
	}
	return record.Cell{}, false
}

// Bench is results/bench.json, decoded into the benchmark's own report type.
type Bench = record.Bench

// LoadBench reads results/bench.json.
func LoadBench(dir string) (*Bench, error) {
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		return nil, err
	}
	var r Bench
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bench.json: %w", err)
	}
	return &r, nil
}

func findBench(b *Bench, name string) (record.BenchResult, bool) {
	if b == nil {
		return record.BenchResult{}, false
	}
	for _, r := range b.Impls {
		if r.Name == name {
			return r, true
		}
	}
	return record.BenchResult{}, false
}

const (
	missingMatrix = "`results/correctness.json` is missing: run `go run ./cmd/bench matrix` to fill this in."
	missingBench  = "`results/bench.json` is missing: run `make bench` to fill this in."
)

// pageBlocks renders every generated block of a lesson page.
func pageBlocks(p Page, recs map[string]Record, m Matrix, others Topologies, mErr error, mSet string, b *Bench, bErr error) map[string]string {
	blocks := map[string]string{}
	if len(p.Impls) > 0 {
		blocks["locks"] = locksBlock(p.Impls)
	}
	for _, r := range p.Runs {
		blocks["run:"+r.ID] = runBlock(recs, r)
	}
	if len(p.Cells) > 0 || len(p.Bench) > 0 {
		blocks["figures"] = figuresBlock(p, m, others, mErr, mSet, b, bErr)
	}
	if len(p.Compare) > 0 {
		blocks["noise"] = noiseBlock(p, b, bErr)
	}
	return blocks
}

func locksBlock(names []string) string {
	var b strings.Builder
	for _, n := range names {
		s, err := impls.Lookup(n)
		if err != nil {
			fmt.Fprintf(&b, "- `%s`: not registered (%v)\n", n, err)
			continue
		}
		fmt.Fprintf(&b, "- [`%s`](../../%s) (capabilities: %s): %s.", s.Name, s.Source, s.Caps, strings.TrimSuffix(s.Summary, "."))
		if s.Broken != "" {
			fmt.Fprintf(&b, " **Deliberately broken:** %s.", strings.TrimSuffix(s.Broken, "."))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func runBlock(recs map[string]Record, r Run) string {
	rec, ok := recs[r.ID]
	if !ok {
		return "Not run yet: run `make lessons`."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", rec.Command())
	who := fmt.Sprintf("%d clients in one process", rec.Clients)
	if rec.Processes {
		who = fmt.Sprintf("%d client processes", rec.Clients)
	}
	fmt.Fprintf(&b, "Measured (seed %d, TTL %s, %s): **%s**. The lab expects %s: %s.",
		rec.Seed, rec.TTL, who, rec.Verdict, rec.Expected, expectationWhy(rec))
	if !checker.Agrees(rec.Expected, rec.Verdict) {
		fmt.Fprintf(&b, " ⚠ This run differs from the expectation.")
	}
	if len(rec.Tried) > 1 {
		fmt.Fprintf(&b, " Seeds %s were tried in turn; the one shown is the last.", joinInts(rec.Tried))
	}
	fmt.Fprintf(&b, " [Porcupine](glossary.md#porcupine) checked %d [critical sections](glossary.md#sections-checked) (%d with an [unknown outcome](glossary.md#unknown-outcome)).", rec.Sections, rec.Unknown)
	if rec.Recovery > 0 {
		fmt.Fprintf(&b, " [Recovery](glossary.md#recovery) after the crash: %d ms.", rec.Recovery)
	}
	if len(rec.Figures) > 0 {
		fmt.Fprintf(&b, " [Figures](glossary.md#figures) of this run: %s.", linkedFigures(rec.Figures))
	}
	if rec.Detail != "" {
		fmt.Fprintf(&b, " Detail: %s.", strings.TrimSuffix(rec.Detail, "."))
	}
	b.WriteString("\n")
	if rec.SVG != "" {
		fmt.Fprintf(&b, "\n![Recorded timeline of %s under %s](%s)\n", rec.Impl, rec.Scenario, rec.SVG)
	}
	if rec.HTML != "" {
		fmt.Fprintf(&b, "\nPorcupine's [interactive timeline](glossary.md#timeline) of the whole run: [%s](%s) (download it and open it in a browser; the faults are on the `faults` row).\n", rec.HTML, rec.HTML)
	}
	fmt.Fprintf(&b, "\n<sub>Generated %s by `make lessons`.</sub>\n", rec.Generated)
	return b.String()
}

// expectationWhy is why the lab expects a run's verdict: the expectation
// table's reason as it reads now (scenarios/expectations.md, the file the
// sentence quotes), so a reason corrected there reaches the page without
// a rerun; the record's copy, from the run's day, only where the row is
// gone or now expects another verdict.
func expectationWhy(rec Record) string {
	exp, err := scenarios.Expected(rec.Impl, topology.Or(rec.Topology), rec.Scenario, rec.Fencing)
	if err != nil || exp.Verdict != rec.Expected {
		return rec.Why
	}
	return exp.Why
}

func joinInts(xs []int64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

// linkedFigures renders figures with each name linked to its glossary
// entry.
func linkedFigures(f map[string]float64) string {
	var keys []string
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %g", glossaryLink(k), f[k]))
	}
	return strings.Join(parts, ", ")
}

func figuresBlock(p Page, m Matrix, others Topologies, mErr error, mSet string, b *Bench, bErr error) string {
	var s strings.Builder
	if len(p.Cells) > 0 {
		s.WriteString("From `results/correctness.json` (the verdict matrix)")
		var topos []string
		for _, c := range p.Cells {
			if _, t := c.lockOn(); others.OwnFile[t] && !slices.Contains(topos, t) {
				topos = append(topos, t)
			}
		}
		if len(topos) > 0 {
			var files []string
			for _, t := range topos {
				files = append(files, fmt.Sprintf("`results/topologies/%s/correctness.json`", t))
			}
			fmt.Fprintf(&s, ", and for the rows on another topology from that topology's own matrix when the main one lacks them (%s)", strings.Join(files, ", "))
		}
		s.WriteString(":\n\n")
		if mErr != nil {
			s.WriteString(missingMatrix + "\n")
		} else {
			fmt.Fprintf(&s, "%s %s\n\n", mSet, MatrixFigureRule)
			table := report.NewTable("implementation", "scenario", "fencing", "verdict", "expected", "runs", "clients", "sections checked", "recovery", "figures")
			for _, c := range p.Cells {
				for _, fenced := range []bool{false, true} {
					impl, topo := c.lockOn()
					r, ok := m.find(impl, c.Scenario, fenced)
					if topo != topology.SingleName {
						r, ok = others.Cells.findOn(impl, topo, c.Scenario, fenced)
					}
					if !ok {
						continue
					}
					v := verdictWithCount(r.Verdict, []record.Cell{r})
					if r.Counterexample != "" {
						v = fmt.Sprintf("[%s](../../results/%s)", v, filepath.ToSlash(r.Counterexample))
					}
					rec, fig := cellRecovery(r), cellFigures(r)
					table.Row(cellLock(r), "`"+r.Scenario+"`", yesNo(r.Fencing), v, string(r.Expected), strconv.Itoa(r.Runs), cellClients(r), strconv.Itoa(r.Sections), rec, fig)
				}
			}
			s.WriteString(table.String())
		}
	}
	if len(p.Bench) > 0 {
		s.WriteString("\nFrom `results/bench.json` (what the lock costs; every column is defined in the [glossary](glossary.md#pairs-per-s)):\n\n")
		if bErr != nil {
			s.WriteString(missingBench + "\n")
		} else {
			fmt.Fprintf(&s, "Measured %s by `%s`. %s Medians over trials, with [min–max].\n\n", b.Date, b.Command, benchSettings(b))
			table := report.NewTable("implementation", "uncontended acquire+release pairs/s", "uncontended acquire p99", "contended pairs/s",
				"contended hand-off p50", fmt.Sprintf("recovery after a holder crash (TTL %s)", benchTTL(b)))
			for _, n := range p.Bench {
				r, ok := findBench(b, n)
				if !ok {
					table.Row("`"+n+"`", "not measured")
					continue
				}
				table.Row("`"+n+"`", uncontended(r), acquireP99(r), contended(r), handoff(r), recovery(r))
			}
			s.WriteString(table.String())
			if p.Fairness {
				s.WriteString("\n" + fairnessTable(b, p.Bench))
			}
		}
	}
	return s.String()
}

// fairnessTable is the benchmark's contended run seen from the waiters:
// how a lock wakes them, how often the releaser takes the lock straight
// back, how evenly the grants spread (Jain's index, 1 = even), and how
// long the unluckiest waiter waited.
func fairnessTable(b *Bench, names []string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Who gets the lock next, from the same contended run (%d clients on one key, %d trials):\n\n", b.Settings.Clients, b.Settings.Trials)
	table := report.NewTable("implementation", "waiters", "grants back to the releaser", "Jain's index", "wait p50", "wait p99", "longest wait",
		"server cost per acquisition")
	for _, n := range names {
		r, ok := findBench(b, n)
		if !ok || r.Contended == nil {
			table.Row("`"+n+"`", "not measured")
			continue
		}
		c := r.Contended
		cost := "–"
		if c.CostPerAcquisition != nil {
			cost = fmtStat(*c.CostPerAcquisition, " "+c.CostUnit)
		}
		table.Row("`"+n+"`", waiting(r.Caps), fmtStat(scaled(c.SameClientShare, 100), " %"), fmt.Sprintf("%.4f", c.Jain.Median),
			fmtStat(c.WaitP50, " ms"), fmtStat(c.WaitP99, " ms"), fmtStat(c.WaitMax, " ms"), cost)
	}
	s.WriteString(table.String())
	return s.String()
}

// waiting says how a lock's waiters learn it is free, from its declared
// capabilities: no-polling locks are woken by the server.
func waiting(caps string) string {
	if strings.Contains(caps, "no-polling") {
		return "woken by the server"
	}
	return "poll"
}

func scaled(st record.Stat, k float64) record.Stat {
	st.Median, st.Min, st.Max = st.Median*k, st.Min*k, st.Max*k
	return st
}

// MatrixSettings says what the matrix's figures were measured with: the
// TTL (every cell's own, or the one its report's header names, for a
// matrix older than the cells' settings) and the runs per cell.
func MatrixSettings(m Matrix, resultsDir string) string {
	ttls, runs, clients := map[string]bool{}, map[int]bool{}, true
	for _, c := range m {
		ttls[c.TTL] = true
		runs[c.Runs] = true
		clients = clients && c.Clients > 0
	}
	if ttls[""] {
		delete(ttls, "")
		if b, err := os.ReadFile(filepath.Join(resultsDir, "correctness.md")); err == nil {
			if h := matrixHeaderRe.FindSubmatch(b); h != nil {
				ttls[string(h[1])] = true
			}
		}
	}
	ttl := "not recorded"
	if len(ttls) > 0 {
		ttl = strings.Join(sortedKeys(ttls), ", ")
	}
	var rs []string
	for r := range runs {
		rs = append(rs, strconv.Itoa(r))
	}
	sort.Strings(rs)
	who := "the clients each cell ran in its column"
	if !clients {
		who = "clients per cell not recorded by this matrix (–)"
	}
	return fmt.Sprintf("Settings of the matrix: TTL / session timeout %s, %s run(s) per cell, %s.", ttl, strings.Join(rs, ", "), who)
}

var matrixHeaderRe = regexp.MustCompile(`TTL / session timeout ([^,]+), \d+ run\(s\) per cell`)

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cellClients says how many clients a matrix cell ran, and whether as
// processes; "–" for a matrix older than the cells' settings.
func cellClients(r record.Cell) string {
	switch {
	case r.Clients == 0:
		return "–"
	case r.Processes:
		return fmt.Sprintf("%d processes", r.Clients)
	}
	return fmt.Sprintf("%d in one process", r.Clients)
}

func benchTTL(b *Bench) string {
	return (time.Duration(b.Settings.TTLMS) * time.Millisecond).String()
}

// benchSettings says what the benchmark's figures were measured with.
func benchSettings(b *Bench) string {
	st := b.Settings
	return fmt.Sprintf("Settings of the benchmark: TTL / session timeout %s, %d contending clients, %d trials of %s each.",
		benchTTL(b), st.Clients, st.Trials, (time.Duration(st.DurationMS) * time.Millisecond).String())
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func fmtStat(st record.Stat, unit string) string {
	return fmt.Sprintf("%s%s [%s–%s]", num(st.Median), unit, num(st.Min), num(st.Max))
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func uncontended(r record.BenchResult) string {
	if r.Uncontended == nil {
		return "–"
	}
	return fmtStat(r.Uncontended.PairsPerSec, "")
}

func acquireP99(r record.BenchResult) string {
	if r.Uncontended == nil {
		return "–"
	}
	return fmtStat(r.Uncontended.AcquireP99, " ms")
}

func contended(r record.BenchResult) string {
	if r.Contended == nil {
		return "–"
	}
	return fmtStat(r.Contended.PairsPerSec, "") + fmt.Sprintf(" (%d clients)", r.Contended.Clients)
}

func handoff(r record.BenchResult) string {
	if r.Contended == nil {
		return "–"
	}
	return fmtStat(r.Contended.HandoffP50, " ms")
}

func recovery(r record.BenchResult) string {
	if r.Recovery == nil {
		return "–"
	}
	if r.Recovery.Seconds != nil {
		return fmt.Sprintf("%s s", num(*r.Recovery.Seconds))
	}
	if r.Recovery.Verdict != "" {
		return r.Recovery.Verdict + " (" + r.Recovery.Note + ")"
	}
	return r.Recovery.Note
}

// pagesCovering lists every page that explains, runs or quotes impl.
func pagesCovering(impl string) []string {
	var out []string
	for _, p := range Pages {
		covers := slices.Contains(p.Impls, impl) || slices.Contains(p.Bench, impl)
		for _, r := range p.Runs {
			covers = covers || r.Impl == impl
		}
		for _, c := range p.Cells {
			lock, _ := c.lockOn()
			covers = covers || lock == impl
		}
		if covers {
			out = append(out, p.File)
		}
	}
	return out
}

// locksIndex lists every registered lock with the page that covers it and
// what the page does with it.
func locksIndex() string {
	table := report.NewTable("lock", "kind", "page", "also on")
	for _, s := range impls.All() {
		kind := "ours"
		switch {
		case s.Guest:
			kind = "guest"
		case s.Peer:
			kind = "peer library"
		case s.Broken != "":
			kind = "deliberately broken"
		}
		page, also := "no page yet", []string{}
		if f := lessonPage(s.Name); f != "" {
			page = fmt.Sprintf("[%s](%s)", titleOf(f), f)
			for _, o := range pagesCovering(s.Name) {
				if o != f {
					also = append(also, fmt.Sprintf("[%s](%s)", strings.SplitN(titleOf(o), ".", 2)[0], o))
				}
			}
		}
		if len(also) == 0 {
			also = []string{"–"}
		}
		table.Row("`"+s.Name+"`", kind, page, strings.Join(also, ", "))
	}
	return table.String()
}

func titleOf(file string) string {
	for i, p := range Pages {
		if p.File == file {
			return fmt.Sprintf("%d. %s", i+1, p.Title)
		}
	}
	return file
}

// verdictCell renders one implementation × scenario cell: the verdict
// without fencing, then with it where the lock issues tokens.
func verdictCell(get func(fenced bool) (string, bool)) string {
	var parts []string
	if v, ok := get(false); ok {
		parts = append(parts, v)
	}
	if v, ok := get(true); ok {
		parts = append(parts, "fenced: "+v)
	}
	if len(parts) == 0 {
		return "·"
	}
	return strings.Join(parts, "<br>")
}

// SummaryTable is the implementation × key scenario table with the
// verdicts, each implementation linked to its lesson (prefix is the path
// from the reader's page to docs/lessons/, "" inside it). Without the
// matrix it falls back to the lessons' own runs and says so.
func SummaryTable(m Matrix, mErr error, recs map[string]Record, prefix string) string {
	var b strings.Builder
	get := func(impl, topo, sc string) func(bool) (string, bool) {
		return func(fenced bool) (string, bool) {
			if mErr == nil {
				r, ok := m.findOn(impl, topo, sc, fenced)
				return string(r.Verdict), ok
			}
			if topo != topology.SingleName {
				return "", false // the lessons' own runs are all single-server
			}
			for _, rec := range recs {
				if rec.Impl == impl && topology.Or(rec.Topology) == topology.SingleName && rec.Scenario == sc && rec.Fencing == fenced {
					return string(rec.Verdict), true
				}
			}
			return "", false
		}
	}
	if mErr != nil {
		b.WriteString(missingMatrix + " Until then the table shows only the lessons' own runs (`docs/lessons/runs.json`).\n\n")
	} else {
		b.WriteString("Verdicts from `results/correctness.json`; · means the scenario does not apply or was not run.\n\n")
	}
	table := report.NewTable(append([]string{"implementation"}, KeyScenarios...)...)
	for _, s := range impls.All() {
		// A topology other than the single server is a row of its own,
		// named beside the lock.
		for _, topo := range topologies(m) {
			name := fmt.Sprintf("`%s`", s.Name)
			if l := PageFor(s.Name); l != "" {
				name = fmt.Sprintf("[`%s`](%s%s)", s.Name, prefix, l)
			}
			if topo != topology.SingleName {
				name += fmt.Sprintf(" on `%s`", topo)
			}
			var cells []string
			has := false
			for _, sc := range KeyScenarios {
				c := verdictCell(get(s.Name, topo, sc))
				if c != "·" {
					has = true
				}
				cells = append(cells, c)
			}
			if !has {
				continue
			}
			table.Row(append([]string{name}, cells...)...)
		}
	}
	b.WriteString(table.String())
	return b.String()
}

func indexList(recs map[string]Record) string {
	var b strings.Builder
	for i, p := range Pages {
		fmt.Fprintf(&b, "%d. [%s](%s)", i+1, p.Title, p.File)
		var shown []string
		for _, r := range p.Runs {
			if rec, ok := recs[r.ID]; ok {
				f := ""
				if rec.Fencing {
					f = " fenced"
				}
				lock := "`" + rec.Impl + "`"
				if t := topology.Or(rec.Topology); t != topology.SingleName {
					lock += " on `" + t + "`"
				}
				shown = append(shown, fmt.Sprintf("%s / `%s`%s: %s", lock, rec.Scenario, f, rec.Verdict))
			}
		}
		if len(shown) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(shown, "; "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func backend(s impls.Spec) string {
	switch {
	case s.Backend.InProcess:
		return "in-process"
	case s.Backend.Kind == "":
		return "none"
	case s.Backend.Nodes > 1:
		return fmt.Sprintf("%d %s nodes", s.Backend.Nodes, s.Backend.Kind.Title())
	}
	return s.Backend.Kind.Title()
}

// cellLock names a figures table's lock, with its topology when it is not
// the single one.
func cellLock(c record.Cell) string {
	if t := topology.Or(c.Topology); t != topology.SingleName {
		return fmt.Sprintf("`%s` on `%s`", c.Impl, t)
	}
	return "`" + c.Impl + "`"
}
