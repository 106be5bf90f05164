package lessons

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// A figure a learner reads must say where it comes from. Every number a
// page prints is one of two kinds: a run's own, printed beside the seed
// that names the run (the run blocks, and the matrix's per-cell figures,
// which are its last run's); or a cell's summary over its runs by a rule the
// block states once (MatrixFigureRule, DecisionRecoveryRule). The pages
// once printed a cell's first run's recovery beside its last run's figures
// ("964 ms" next to recovery-ms 976) with nothing to tell them apart.

// MatrixFigureRule is stated once in every figures block of the matrix.
const MatrixFigureRule = "Rule for this table's figures: [sections checked](glossary.md#sections-checked) is the sum over the cell's runs; " +
	"[recovery](glossary.md#recovery) lists, in run order, every run in which another client was granted the lock after the holder died; " +
	"[figures](glossary.md#figures) are the cell's last run's, named by its seed."

// DecisionRecoveryRule is stated once on the decision page.
const DecisionRecoveryRule = "The recovery column is the median, over the `holder-crash` cell's runs in which another client was granted the lock after the holder died, of that time " +
	"(the lower middle one of an even count), shown only where the cell is safe: where it is not, another client may have held the lock before the holder died."

// cellRecovery renders a cell's recoveries by MatrixFigureRule.
func cellRecovery(r record.Cell) string {
	if len(r.RecoveryMillis) == 0 {
		return "–"
	}
	var parts []string
	for _, v := range r.RecoveryMillis {
		parts = append(parts, strconv.FormatInt(v, 10))
	}
	s := strings.Join(parts, ", ") + " ms"
	if len(r.RecoveryMillis) < r.Runs {
		s += fmt.Sprintf(" (%d of %d runs)", len(r.RecoveryMillis), r.Runs)
	}
	return s
}

// cellFigures renders a cell's figures by MatrixFigureRule: the last run's,
// named by its seed.
func cellFigures(r record.Cell) string {
	fig := linkedFigures(r.Figures)
	if fig == "" {
		return "–"
	}
	if len(r.Seeds) == 0 {
		return "last run (seed not recorded): " + fig
	}
	return fmt.Sprintf("last run (seed %d): %s", r.Seeds[len(r.Seeds)-1], fig)
}

// medianRecovery is DecisionRecoveryRule's figure.
func medianRecovery(r record.Cell) (int64, bool) {
	if len(r.RecoveryMillis) == 0 || !checker.Survived(r.Verdict) {
		return 0, false
	}
	v := slices.Clone(r.RecoveryMillis)
	slices.Sort(v)
	return v[(len(v)-1)/2], true
}

var (
	figuresRowRe = regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)`(?: on `([a-z0-9-]+)`)? \\| `([a-z0-9-]+)` \\| (yes|no) \\|(?:[^|\\n]*\\|){5} ([^|\\n]*) \\| ([^|\\n]*) \\|$")
	lastRunRe    = regexp.MustCompile(`^last run \(seed (-?\d+)\): (.*)$`)
	figurePairRe = regexp.MustCompile(`([a-z][a-z0-9-]*) (-?[0-9.e+]+)`)
	linkTextRe   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// MatrixFigureProblems holds every row of a page's matrix figures tables to
// the cell it quotes: the recovery must be the rule's summary of the cell's
// runs, the figures must name a seed of the cell's runs and be that run's
// (the last, whose figures the matrix keeps), and the rule must be stated.
// m holds the cells of every topology a page quotes (LoadMatrix's and
// LoadTopologies'); a row names its topology when it is not the single one.
func MatrixFigureProblems(page string, m Matrix) []string {
	var out []string
	for _, blk := range blockRe.FindAllStringSubmatch(page, -1) {
		if blk[1] != "figures" || !strings.Contains(blk[0], "| recovery | figures |") {
			continue
		}
		if !strings.Contains(blk[0], MatrixFigureRule) {
			out = append(out, "the matrix's figures table does not state the rule its figures follow")
		}
		for _, row := range figuresRowRe.FindAllStringSubmatch(blk[0], -1) {
			impl, topo, sc, fenced := row[1], topology.Or(row[2]), row[3], row[4] == "yes"
			rec, fig := strings.TrimSpace(row[5]), linkTextRe.ReplaceAllString(strings.TrimSpace(row[6]), "$1")
			c, ok := m.findOn(impl, topo, sc, fenced)
			what := fmt.Sprintf("%s under %s (fencing %v)", impl, sc, fenced)
			if topo != topology.SingleName {
				what = fmt.Sprintf("%s on %s under %s (fencing %v)", impl, topo, sc, fenced)
			}
			if !ok {
				out = append(out, what+": the page quotes a cell the matrix does not hold")
				continue
			}
			if want := cellRecovery(c); rec != want {
				out = append(out, fmt.Sprintf("%s: recovery %q is neither a named run's nor the rule's summary of the cell's runs (%q)", what, rec, want))
			}
			if fig == "–" {
				if len(c.Figures) > 0 {
					out = append(out, what+": the cell's figures are missing")
				}
				continue
			}
			lr := lastRunRe.FindStringSubmatch(fig)
			if lr == nil {
				out = append(out, fmt.Sprintf("%s: figures %q name no run", what, fig))
				continue
			}
			seed, _ := strconv.ParseInt(lr[1], 10, 64)
			if len(c.Seeds) == 0 || c.Seeds[len(c.Seeds)-1] != seed {
				out = append(out, fmt.Sprintf("%s: figures say seed %d, which is not the cell's last run (seeds %v)", what, seed, c.Seeds))
			}
			for _, p := range figurePairRe.FindAllStringSubmatch(lr[2], -1) {
				v, err := strconv.ParseFloat(p[2], 64)
				if got, ok := c.Figures[p[1]]; err != nil || !ok || got != v {
					out = append(out, fmt.Sprintf("%s: %s %s is not the run's (%g)", what, p[1], p[2], got))
				}
			}
		}
	}
	return out
}

// DuplicateRuns finds one command shown on two pages as two runs: a learner
// who runs it gets one set of figures, and the pages must not show two.
// Two declarations of the same cell and seed under two ids are the cause;
// two records of one command with different measurements the symptom.
func DuplicateRuns(pages []Page, recs map[string]Record) []string {
	var out []string
	byCommand := map[string][]string{}
	for _, p := range pages {
		for _, r := range p.Runs {
			c := Record{Impl: r.Impl, Topology: r.Topology, Scenario: r.Scenario, Fencing: r.Fencing, Seed: r.Seed, TTL: "·"}.Command()
			byCommand[c] = appendString(byCommand[c], r.ID)
		}
	}
	var cmds []string
	for c, ids := range byCommand {
		if len(ids) > 1 {
			cmds = append(cmds, fmt.Sprintf("%s is declared as %d runs (%s): declare it once and show that run on every page", c, len(ids), strings.Join(ids, ", ")))
		}
	}
	sort.Strings(cmds)
	out = append(out, cmds...)
	seen := map[string]Record{}
	var ids []string
	for id := range recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := recs[id]
		c := r.Command()
		if o, ok := seen[c]; ok && !sameMeasure(o, r) {
			out = append(out, fmt.Sprintf("`%s` gives two sets of figures (runs %s and %s)", c, o.ID, r.ID))
		}
		seen[c] = r
	}
	return out
}

func sameMeasure(a, b Record) bool {
	if a.Verdict != b.Verdict || a.Sections != b.Sections || a.Unknown != b.Unknown || a.Recovery != b.Recovery || len(a.Figures) != len(b.Figures) {
		return false
	}
	for k, v := range a.Figures {
		if b.Figures[k] != v {
			return false
		}
	}
	return true
}

var (
	// proseFigureRe finds a measured number in hand-written prose: one with
	// a unit of time, rate or share.
	proseFigureRe = regexp.MustCompile(`(-?\d[\d,]*(?:\.\d+)?)\s?(ms|s|pairs/s|sales/s|%)(?:\W|$)`)
	seedRe        = regexp.MustCompile(`\bseed (-?\d+)\b`)
)

// ProseFigureProblems holds the numbers of a page's hand-written prose to
// the rule: a measured figure (a time, rate or share) is in a clause that
// names the seed of a run on the page whose record holds that number. A
// comparison of speed or cost is held by the benchmark check instead
// (BenchClaimProblems), so a clause that cites results/bench.json is left
// to it.
func ProseFigureProblems(page string, p Page, recs map[string]Record) []string {
	var out []string
	for _, para := range paragraphs(Prose(page)) {
		if strings.HasPrefix(para, "#") {
			continue
		}
		for _, cl := range clauses(para) {
			if strings.Contains(cl, "bench.json") {
				continue
			}
			for _, f := range proseFigureRe.FindAllStringSubmatch(cl, -1) {
				v, err := strconv.ParseFloat(strings.ReplaceAll(f[1], ",", ""), 64)
				if err != nil {
					continue
				}
				if !heldByNamedRun(cl, v, p, recs) {
					out = append(out, fmt.Sprintf("%q: %s %s names no run of the page (seed N, with the run's value) and follows no stated summary rule", cl, f[1], f[2]))
				}
			}
		}
	}
	return out
}

func heldByNamedRun(clause string, v float64, p Page, recs map[string]Record) bool {
	for _, s := range seedRe.FindAllStringSubmatch(clause, -1) {
		for _, r := range p.Runs {
			rec, ok := recs[r.ID]
			if !ok || strconv.FormatInt(rec.Seed, 10) != s[1] {
				continue
			}
			if float64(rec.Recovery) == v || float64(rec.Sections) == v {
				return true
			}
			for _, fv := range rec.Figures {
				if fv == v {
					return true
				}
			}
		}
	}
	return false
}
