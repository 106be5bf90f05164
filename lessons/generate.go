package lessons

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all" // every lock a page can name
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// Options configure a regeneration.
type Options struct {
	Dir     string // the pages (docs/lessons)
	Results string // results/ with correctness.json and bench.json
	// Readme is the project README whose opening verdict table is
	// regenerated too (default README.md; "-" to leave it alone).
	Readme string
	TTL    time.Duration // lease TTL for every run
	Pages  []string      // page files to regenerate (default: all)
	// Attempts bounds the seeds tried when an expected failure does not show.
	Attempts int
	// NoRun rewrites the pages from docs/lessons/runs.json and the results
	// without running anything (for editing the prose).
	NoRun bool
	Logf  func(format string, args ...any)
}

// Record is what one lesson run measured; runs.json keeps them so a partial
// regeneration (-page) still knows the other pages' runs.
type Record struct {
	ID        string             `json:"id"`
	Impl      string             `json:"impl"`
	Scenario  string             `json:"scenario"`
	Fencing   bool               `json:"fencing"`
	Topology  string             `json:"topology,omitempty"` // empty: the single one
	Seed      int64              `json:"seed"`
	Tried     []int64            `json:"seeds_tried"`
	TTL       string             `json:"ttl"`
	Verdict   scenarios.Verdict  `json:"verdict"`
	Expected  scenarios.Verdict  `json:"expected"`
	Why       string             `json:"why"`
	Clients   int                `json:"clients"`
	Processes bool               `json:"processes,omitempty"`
	Sections  int                `json:"sections_checked"`
	Unknown   int                `json:"sections_unknown"`
	Recovery  int64              `json:"recovery_ms,omitempty"`
	Figures   map[string]float64 `json:"figures,omitempty"`
	Detail    string             `json:"detail,omitempty"`
	HTML      string             `json:"html,omitempty"` // relative to the pages
	SVG       string             `json:"svg,omitempty"`
	Generated string             `json:"generated"`
}

const (
	clients  = 8
	sections = 2000
)

// Command is the exact command line that reproduces a record's run.
func (r Record) Command() string {
	c := fmt.Sprintf("go run ./cmd/bench check -impl %s -scenario %s", r.Impl, r.Scenario)
	if t := topology.Or(r.Topology); t != topology.SingleName {
		c = fmt.Sprintf("go run ./cmd/bench check -impl %s -topology %s -scenario %s", r.Impl, t, r.Scenario)
	}
	if r.Fencing {
		c += " -fencing"
	}
	return c + fmt.Sprintf(" -ttl %s -seed %d", r.TTL, r.Seed)
}

// Generate runs every cell the chosen pages need, draws the timelines,
// copies the counterexamples next to the pages and rewrites the pages'
// generated blocks, then the index and the decision table.
func Generate(ctx context.Context, opt Options) error {
	if opt.Dir == "" {
		opt.Dir = filepath.Join("docs", "lessons")
	}
	if opt.Results == "" {
		opt.Results = "results"
	}
	if opt.Readme == "" {
		opt.Readme = "README.md"
	}
	if opt.TTL <= 0 {
		opt.TTL = time.Second
	}
	if opt.Attempts <= 0 {
		opt.Attempts = 5
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	chosen, err := choosePages(opt.Pages)
	if err != nil {
		return err
	}
	if err := CheckPages(); err != nil {
		return err
	}
	records, err := loadRecords(opt.Dir)
	if err != nil {
		return err
	}
	// A record no page declares any more (a run renamed or merged into
	// another page's) goes, so no check holds a page to it.
	if pruned := declaredRecords(records); len(pruned) != len(records) {
		records = pruned
		if err := saveRecords(opt.Dir, records); err != nil {
			return err
		}
	}
	sold, err := loadSale(opt.Dir)
	if err != nil {
		return err
	}
	race, err := loadTakeover(opt.Dir)
	if err != nil {
		return err
	}
	m, mErr := LoadMatrix(opt.Results)
	others, oErr := LoadTopologies(opt.Results)
	if oErr != nil {
		return oErr
	}
	b, bErr := LoadBench(opt.Results)
	// A run two pages show is run once: the second page shows the first's
	// record, so one command never gives two sets of figures.
	ran := map[string]bool{}
	for _, p := range chosen {
		for _, r := range p.Runs {
			if opt.NoRun || ran[r.ID] {
				continue
			}
			ran[r.ID] = true
			rec, err := runOne(ctx, opt, r)
			if err != nil {
				return fmt.Errorf("%s: %w", p.File, err)
			}
			records[r.ID] = rec
			if err := saveRecords(opt.Dir, records); err != nil {
				return err
			}
		}
		mSet := MatrixSettings(m, opt.Results)
		blocks := pageBlocks(p, records, m, others, mErr, mSet, b, bErr)
		if p.Sale {
			if !opt.NoRun {
				s, err := runSale(ctx, opt, p, records)
				if err != nil {
					return fmt.Errorf("%s: %w", p.File, err)
				}
				if err := saveSale(opt.Dir, s); err != nil {
					return err
				}
				sold = &s
			}
			blocks["sale"] = saleBlock(p, sold, records)
		}
		if p.Takeover {
			if !opt.NoRun {
				t, err := runTakeover(ctx, opt)
				if err != nil {
					return fmt.Errorf("%s: %w", p.File, err)
				}
				if err := saveTakeover(opt.Dir, t); err != nil {
					return err
				}
				race = &t
			}
			blocks["takeover"] = takeoverBlock(race)
		}
		if p.DocClaims {
			if err := docClaimsBlocksInto(ctx, opt, blocks); err != nil {
				return fmt.Errorf("%s: %w", p.File, err)
			}
		}
		if p.File == DecisionPage {
			blocks["decision"] = decisionTable(m, others, mErr, mSet, records, b, bErr)
		}
		if err := rewriteLinked(filepath.Join(opt.Dir, p.File), blocks, true); err != nil {
			return err
		}
		opt.Logf("wrote %s", filepath.Join(opt.Dir, p.File))
	}
	if err := rewriteLinked(filepath.Join(opt.Dir, "README.md"), map[string]string{
		"index": indexList(records),
		"locks": locksIndex(),
		"table": SummaryTable(m, mErr, records, ""),
	}, true); err != nil {
		return err
	}
	if err := rewrite(filepath.Join(opt.Dir, "sources.md"), map[string]string{"sources": sourcesBlock()}); err != nil {
		return err
	}
	if opt.Readme != "-" {
		// The project README opens with the same table, its links relative
		// to the repository root.
		rel, err := filepath.Rel(filepath.Dir(opt.Readme), opt.Dir)
		if err != nil {
			return err
		}
		if err := rewrite(opt.Readme, map[string]string{"verdicts": SummaryTable(m, mErr, records, filepath.ToSlash(rel)+"/")}); err != nil {
			return err
		}
	}
	var bench *Bench
	if bErr == nil {
		bench = b
	}
	return checkProse(opt, records, m, others, mErr, bench)
}

// checkProse holds every page's hand-written sentences to the matrix and
// the page's runs, and its run sentences to their timelines, once the
// generated blocks are rewritten: a new matrix that contradicts the prose
// fails the regeneration, naming the sentences to rewrite.
func checkProse(opt Options, recs map[string]Record, m Matrix, others Topologies, mErr error, bench *Bench) error {
	var ev []Evidence
	if mErr == nil {
		ev = MatrixEvidence(append(append(Matrix{}, m...), others.Cells...))
	}
	var errs []error
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(opt.Dir, filepath.FromSlash(rel))) }
	for _, p := range Pages {
		b, err := os.ReadFile(filepath.Join(opt.Dir, p.File))
		if err != nil {
			return fmt.Errorf("read the hand-written page: %w", err)
		}
		contradicted := Contradictions
		if p.EveryTopology {
			contradicted = ContradictionsEverywhere
		}
		for _, msg := range contradicted(string(b), append(append([]Evidence{}, ev...), RunEvidence(p, recs)...), recs) {
			errs = append(errs, fmt.Errorf("%s: contradicted: %s", p.File, msg))
		}
		for _, msg := range FigureProblems(string(b), recs, read) {
			errs = append(errs, fmt.Errorf("%s: %s", p.File, msg))
		}
		for _, msg := range SourceProblems(string(b)) {
			errs = append(errs, fmt.Errorf("%s: source: %s", p.File, msg))
		}
		for _, msg := range GlossaryLinkProblems(string(b)) {
			errs = append(errs, fmt.Errorf("%s: glossary: %s", p.File, msg))
		}
		for _, msg := range BenchClaimProblems(string(b), bench) {
			errs = append(errs, fmt.Errorf("%s: speed: %s", p.File, msg))
		}
		for _, msg := range IntervalShownProblems(string(b), p) {
			errs = append(errs, fmt.Errorf("%s: speed: %s", p.File, msg))
		}
		cells, names := pageCells(p, append(append(Matrix{}, m...), others.Cells...))
		for _, msg := range DigitProblems(string(b), cells, names) {
			errs = append(errs, fmt.Errorf("%s: figure: %s", p.File, msg))
		}
		for _, msg := range ProseFigureProblems(string(b), p, recs) {
			errs = append(errs, fmt.Errorf("%s: figure: %s", p.File, msg))
		}
		if mErr == nil {
			for _, msg := range MatrixFigureProblems(string(b), append(append(Matrix{}, m...), others.Cells...)) {
				errs = append(errs, fmt.Errorf("%s: figure: %s", p.File, msg))
			}
		}
	}
	for _, msg := range DuplicateRuns(Pages, recs) {
		errs = append(errs, fmt.Errorf("figure: %s", msg))
	}
	return errors.Join(errs...)
}

func choosePages(names []string) ([]Page, error) {
	if len(names) == 0 {
		return Pages, nil
	}
	var out []Page
	for _, n := range names {
		found := false
		for _, p := range Pages {
			if p.File == n || strings.TrimSuffix(p.File, ".md") == n {
				out, found = append(out, p), true
			}
		}
		if !found {
			var all []string
			for _, p := range Pages {
				all = append(all, strings.TrimSuffix(p.File, ".md"))
			}
			return nil, fmt.Errorf("unknown page %q; pages: %s", n, strings.Join(all, ", "))
		}
	}
	return out, nil
}

// CheckPages verifies, without running anything, that every run and cell a
// page names is a real implementation and an applicable scenario.
func CheckPages() error {
	var errs []error
	for _, p := range Pages {
		for _, name := range p.Impls {
			if _, err := impls.Lookup(name); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.File, err))
			}
		}
		// A benchmark row may be a lock on another topology
		// ("redis-setnx-px @ redis-sentinel").
		for _, row := range p.Bench {
			impl, topo := record.SplitRow(row)
			if _, err := impls.Lookup(impl); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.File, err))
			}
			if _, err := topology.Lookup(topo); err != nil {
				errs = append(errs, fmt.Errorf("%s: benchmark row %q: %w", p.File, row, err))
			}
		}
		for _, r := range p.Runs {
			spec, err := impls.Lookup(r.Impl)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: run %s: %w", p.File, r.ID, err))
				continue
			}
			s, err := scenarios.Lookup(r.Scenario)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: run %s: %w", p.File, r.ID, err))
				continue
			}
			if r.Fencing && !spec.Caps.Fencing {
				errs = append(errs, fmt.Errorf("%s: run %s: %s issues no fencing tokens", p.File, r.ID, r.Impl))
			}
			if _, err := topology.Lookup(topology.Or(r.Topology)); err != nil {
				errs = append(errs, fmt.Errorf("%s: run %s: %w", p.File, r.ID, err))
				continue
			}
			if err := s.AppliesOn(spec, topology.Or(r.Topology), r.Fencing); err != nil {
				errs = append(errs, fmt.Errorf("%s: run %s: %s does not apply to %s: %v", p.File, r.ID, r.Scenario, r.Impl, err))
			}
		}
		for _, c := range p.Cells {
			impl, topo := c.lockOn()
			if _, err := topology.Lookup(topo); err != nil {
				errs = append(errs, fmt.Errorf("%s: cell %s: %w", p.File, c.Impl, err))
			}
			if _, err := impls.Lookup(impl); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.File, err))
			}
			if _, err := scenarios.Lookup(c.Scenario); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.File, err))
			}
		}
	}
	return errors.Join(errs...)
}

// runOne runs a cell, trying the next seeds when a failure the lab expects
// does not show (timing decides whether a race is caught), and keeps the
// timeline and the counterexample of the run it reports.
func runOne(ctx context.Context, opt Options, r Run) (Record, error) {
	spec, err := impls.Lookup(r.Impl)
	if err != nil {
		return Record{}, err
	}
	topo := topology.Or(r.Topology)
	exp, err := scenarios.Expected(spec.Name, topo, r.Scenario, r.Fencing)
	if err != nil {
		return Record{}, fmt.Errorf("run %s: %w", r.ID, err)
	}
	tmp, err := leftovers.MakeDir("lessons")
	if err != nil {
		return Record{}, err
	}
	defer os.RemoveAll(tmp)
	seed := r.Seed
	if seed == 0 {
		seed = 1
	}
	var out *engine.Outcome
	var tried []int64
	for i := 0; i < opt.Attempts; i++ {
		s := seed + int64(i)
		tried = append(tried, s)
		opt.Logf("lesson run %s: %s @ %s / %s fencing=%v seed %d", r.ID, r.Impl, topo, r.Scenario, r.Fencing, s)
		out, err = engine.RunScenario(ctx, r.Scenario, engine.Options{
			Impl: spec, Topology: r.Topology, Fencing: r.Fencing, Seed: s, TTL: opt.TTL, Clients: clients, Sections: sections,
			OutDir: tmp, KeepHistory: true,
		})
		if err != nil {
			return Record{}, fmt.Errorf("run %s: %w", r.ID, err)
		}
		opt.Logf("  verdict %s (expected %s)", out.Verdict, exp.Verdict)
		if !checker.MissedCounterexample(exp.Verdict, out.Verdict) {
			break
		}
	}
	rec := Record{ID: r.ID, Impl: r.Impl, Scenario: r.Scenario, Fencing: r.Fencing, Topology: r.Topology, Seed: out.Seed, Tried: tried,
		TTL: opt.TTL.String(), Verdict: out.Verdict, Expected: exp.Verdict, Why: exp.Why,
		Clients: out.Clients, Processes: out.Processes,
		Sections: out.Sections, Unknown: out.Unknown, Recovery: out.Recovery.Milliseconds(),
		Figures: out.Figures, Detail: out.Detail, Generated: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	if len(rec.Figures) == 0 {
		rec.Figures = nil
	}
	imgDir, runDir := filepath.Join(opt.Dir, "img"), filepath.Join(opt.Dir, "runs")
	for _, d := range []string{imgDir, runDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Record{}, err
		}
	}
	// A counterexample from an earlier regeneration must not outlive a run
	// that produced none.
	os.Remove(filepath.Join(runDir, r.ID+".html"))
	if out.HTML != "" {
		if err := copyFile(out.HTML, filepath.Join(runDir, r.ID+".html")); err != nil {
			return Record{}, err
		}
		rec.HTML = "runs/" + r.ID + ".html"
	}
	if out.History != "" {
		events, err := lin.ReadEventsFile(out.History)
		if err != nil {
			return Record{}, err
		}
		title := fmt.Sprintf("%s under %s", r.Impl, r.Scenario)
		if topo != topology.SingleName {
			title = fmt.Sprintf("%s on %s under %s", r.Impl, topo, r.Scenario)
		}
		if r.Fencing {
			title += " with fencing"
		}
		title += fmt.Sprintf(" (seed %d): %s", out.Seed, out.Verdict)
		svg := Timeline(events, TimelineOptions{Title: title, Note: out.Detail})
		if err := os.WriteFile(filepath.Join(imgDir, r.ID+".svg"), []byte(svg), 0o644); err != nil {
			return Record{}, err
		}
		rec.SVG = "img/" + r.ID + ".svg"
	}
	return rec, nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func loadRecords(dir string) (map[string]Record, error) {
	out := map[string]Record{}
	b, err := os.ReadFile(filepath.Join(dir, "runs.json"))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	var list []Record
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "runs.json"), err)
	}
	for _, r := range list {
		out[r.ID] = r
	}
	return out, nil
}

// declaredRecords keeps the records of the runs the pages declare.
func declaredRecords(recs map[string]Record) map[string]Record {
	out := map[string]Record{}
	for _, p := range Pages {
		for _, r := range p.Runs {
			if rec, ok := recs[r.ID]; ok {
				out[r.ID] = rec
			}
		}
	}
	return out
}

func saveRecords(dir string, recs map[string]Record) error {
	var list []Record
	for _, p := range Pages {
		for _, r := range p.Runs {
			if rec, ok := recs[r.ID]; ok {
				list = append(list, rec)
			}
		}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "runs.json"), append(b, '\n'), 0o644)
}

// blockRe finds a generated block: <!-- generated:NAME --> ... <!-- /generated -->.
var blockRe = regexp.MustCompile(`(?s)<!-- generated:([a-z0-9:-]+) -->.*?<!-- /generated -->`)

// Rewrite replaces the generated blocks of a page's text. Every block the
// generator has content for must be present, so a page that lost a marker
// fails loudly instead of silently going stale.
func Rewrite(text string, blocks map[string]string) (string, error) {
	seen := map[string]bool{}
	out := blockRe.ReplaceAllStringFunc(text, func(m string) string {
		name := blockRe.FindStringSubmatch(m)[1]
		content, ok := blocks[name]
		if !ok {
			return m
		}
		seen[name] = true
		return "<!-- generated:" + name + " -->\n" + strings.TrimSpace(content) + "\n<!-- /generated -->"
	})
	var missing []string
	for name := range blocks {
		if !seen[name] {
			missing = append(missing, "<!-- generated:"+name+" -->")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return "", fmt.Errorf("missing generated blocks: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func rewrite(path string, blocks map[string]string) error {
	return rewriteLinked(path, blocks, false)
}

// rewriteLinked rewrites a page's generated blocks and, for a page of
// docs/lessons (link), links the glossary terms the blocks use first
// (LinkFirstUses).
func rewriteLinked(path string, blocks map[string]string, link bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the hand-written page: %w", err)
	}
	text, err := Rewrite(string(b), blocks)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if link {
		text = LinkFirstUses(text)
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
