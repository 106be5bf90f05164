package lessons

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// A lesson's hand-written prose explains why; what a lock does under a
// fault is said by a run. This file finds the sentences of the prose that
// say what anyway, so a test can hold each to the runs: a clause claims a
// verdict when it names a lock (its registered name in backticks, or one of
// the plain names the pages use for it, Aliases), a fault (a scenario's
// name in backticks, or a word that can only mean one of a few scenarios,
// FaultWords) and a verdict word (safe, unsafe, stuck, unavailable,
// inconclusive; "breaks", "two holders", "both write" and "guarantee ends"
// say unsafe). "not", "never" or "nor"
// just before a verdict word deny it. A clause that names no lock or no
// fault claims nothing checkable, unless it sits beside a run's generated
// block: then it speaks of that run (the sentence about a figure).

// Aliases are the plain names the hand-written pages use for a registered
// lock. A new page that calls a lock by a new name adds it here.
var Aliases = map[string]string{
	"advisory lock":           "pg-advisory",
	"unique-row lock":         "pg-unique-insert",
	"unique row":              "pg-unique-insert",
	"optimistic version lock": "pg-optimistic",
	"version row":             "pg-optimistic",
	"Redlock":                 "redlock",
	"GETSET timestamp lock":   "redis-getset",
	"ZooKeeper lock":          "zookeeper",
	"fair lock":               "redis-fair",
}

// FaultWords map words of the prose to the scenarios they can mean. A claim
// made with one of them holds when any of those scenarios' runs shows it;
// a scenario named in backticks must show it itself.
var FaultWords = []struct {
	Re        *regexp.Regexp
	Scenarios []string
}{
	{regexp.MustCompile(`(?i)\bpaus(e|es|ed|ing)\b|\bSIGSTOP`), []string{"pause-past-ttl", "late-release", "queued-waiter-pause"}},
	{regexp.MustCompile(`(?i)\bcrash(es|ed)?\b|\bSIGKILL|\bkilled\b`), []string{"holder-crash", "crash-after-setnx", "queued-waiter-crash"}},
	{regexp.MustCompile(`(?i)\bpartition(s|ed)?\b|\bcut off\b`), []string{"holder-partition", "redlock-partition"}},
	{regexp.MustCompile(`(?i)\bslow\b`), []string{"slow-work-past-ttl"}},
	{regexp.MustCompile(`(?i)\bfail-?over\b`), []string{"redis-failover"}},
	{regexp.MustCompile(`(?i)\brestart(s|ed)?\b`), []string{"server-restart", "redlock-restart", "redlock-restart-delayed"}},
	{regexp.MustCompile(`(?i)\bclock\b`), []string{"client-clock-skew", "redlock-clock-jump"}},
	{regexp.MustCompile(`(?i)\bcoupon\b|\boversel|\boversold\b`), []string{"coupon"}},
	{regexp.MustCompile(`(?i)\bhand-?off\b`), []string{"release-hand-off"}},
}

var (
	verdictWordRe = claimWordsRe()
	quotedRe      = regexp.MustCompile(`"[^"]*"|“[^”]*”`)
	tokenWordRe   = regexp.MustCompile(`(?i)\bfencing tokens?\b`)
	negationRe    = regexp.MustCompile(`(?i)\b(not|never|nor)\s+(\S+\s+)?$`)
	unfencedRe    = regexp.MustCompile(`(?i)\bunfenced\b|\bwithout (a )?fenc|\bno fenc`)
	fencedRe      = regexp.MustCompile(`(?i)-fencing\b|\bfenced\b|\bwith fencing\b`)
	fencingRe     = regexp.MustCompile(`(?i)\bfenc`)
	codeFenceRe   = regexp.MustCompile("(?s)```.*?```")
	commentRe     = regexp.MustCompile(`(?s)<!--.*?-->`)
	linkURLRe     = regexp.MustCompile(`\]\([^)]*\)`)
	runMarkRe     = regexp.MustCompile(`\x00run:([a-z0-9-]+)\x00`)
	tickRe        = regexp.MustCompile("`([^`\n]+)`")
	listItemRe    = regexp.MustCompile(`^\d+\. `)
)

// Evidence is one measured verdict a claim may rest on: a matrix cell or a
// run of the page.
type Evidence struct {
	Impl, Scenario string
	// Topology is the cell's or the run's topology (topology.Or).
	Topology string
	Fencing  bool
	Verdict  checker.Verdict
	Source   string // "results/correctness.json" or the run's id
}

// MatrixEvidence lists every cell of every topology as evidence. A
// sentence that names a topology (`zk-ensemble`) is held to that
// topology's cells; one that names none speaks of the single server the
// pages run, so a cell of another neither confirms nor refutes it, except
// on a page that speaks of every topology (Page.EveryTopology).
func MatrixEvidence(m Matrix) []Evidence {
	var out []Evidence
	for _, c := range m {
		out = append(out, Evidence{Impl: c.Impl, Scenario: c.Scenario, Topology: topology.Or(c.Topology), Fencing: c.Fencing, Verdict: c.Verdict, Source: "results/correctness.json"})
	}
	return out
}

// RunEvidence lists a page's own runs as evidence.
func RunEvidence(p Page, recs map[string]Record) []Evidence {
	var out []Evidence
	for _, r := range p.Runs {
		if rec, ok := recs[r.ID]; ok {
			out = append(out, Evidence{Impl: rec.Impl, Scenario: rec.Scenario, Topology: topology.Or(rec.Topology), Fencing: rec.Fencing, Verdict: rec.Verdict, Source: "run " + rec.ID})
		}
	}
	return out
}

// Claim is what one clause of prose says: these locks, under these faults
// (each a set of scenarios it may mean), with or without fencing, show
// these verdicts and not those.
type Claim struct {
	Text   string
	Locks  []string
	Faults [][]string
	// Topologies are the topologies the clause names in backticks; none:
	// the single server, or every one on a page that speaks of all.
	Topologies []string
	Fencing    []bool
	Says       []checker.Verdict
	Denies     []checker.Verdict
	// Runs are the generated run blocks beside the clause's paragraph: a
	// clause that names no lock speaks of them.
	Runs []string
}

// Prose returns a page's hand-written text: the generated blocks become
// run markers (so a clause knows which run it sits beside), code blocks,
// comments and link targets go.
func Prose(page string) string {
	text := blockRe.ReplaceAllStringFunc(page, func(m string) string {
		name := blockRe.FindStringSubmatch(m)[1]
		if id, ok := strings.CutPrefix(name, "run:"); ok {
			return "\n\n\x00run:" + id + "\x00\n\n"
		}
		return "\n\n"
	})
	text = codeFenceRe.ReplaceAllString(text, "\n\n")
	text = commentRe.ReplaceAllString(text, "")
	return linkURLRe.ReplaceAllString(text, "]")
}

// Claims finds every clause of a page's prose that claims a verdict.
func Claims(page string) []Claim {
	paras := paragraphs(Prose(page))
	var out []Claim
	for i, para := range paras {
		if runMarkRe.MatchString(para) {
			continue
		}
		// The runs beside this paragraph: the block just before it, and the
		// block just after when the paragraph leads into it.
		var beside []string
		if i > 0 {
			if m := runMarkRe.FindStringSubmatch(paras[i-1]); m != nil {
				beside = append(beside, m[1])
			}
		}
		if i+1 < len(paras) {
			if m := runMarkRe.FindStringSubmatch(paras[i+1]); m != nil {
				beside = append(beside, m[1])
			}
		}
		for _, cl := range clauses(para) {
			c := claimOf(cl)
			c.Runs = beside
			if len(c.Says)+len(c.Denies) == 0 {
				continue
			}
			if len(c.Locks) == 0 && len(beside) == 0 {
				continue
			}
			if len(c.Locks) > 0 && len(c.Faults) == 0 && len(beside) == 0 {
				continue // a lock and a verdict but no fault: no cell to hold it to
			}
			out = append(out, c)
		}
	}
	return out
}

// paragraphs splits prose at blank lines and list items.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "|"):
			flush()
		case strings.HasPrefix(t, "#"):
			// A heading ends what the paragraphs before it were about.
			flush()
			out = append(out, t)
		case strings.HasPrefix(t, "- ") || listItemRe.MatchString(t):
			flush()
			cur = append(cur, t)
		default:
			cur = append(cur, t)
		}
	}
	flush()
	return out
}

// clauses splits a paragraph at sentence ends and semicolons, never inside
// backticks (`SET key token NX PX ttl.` is one name).
func clauses(para string) []string {
	var out []string
	var b strings.Builder
	inTick := false
	rs := []rune(para)
	for i, r := range rs {
		if r == '`' {
			inTick = !inTick
		}
		b.WriteRune(r)
		if inTick {
			continue
		}
		end := r == ';'
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || rs[i+1] == ' ') {
			end = true
		}
		if end {
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		out = append(out, s)
	}
	return out
}

func claimOf(text string) Claim {
	c := Claim{Text: text}
	names := claimNames()
	implSet, scenarioSet := names.impls, names.scenarios
	locks := map[string]bool{}
	for _, m := range tickRe.FindAllStringSubmatch(text, -1) {
		w := strings.TrimSpace(m[1])
		if implSet[w] {
			locks[w] = true
		}
		if scenarioSet[w] {
			c.Faults = append(c.Faults, []string{w})
		}
		if names.topologies[w] {
			c.Topologies = appendString(c.Topologies, w)
		}
	}
	// Plain words: outside backticks only, so `redis-setnx-px` does not
	// also read as a fault word or an alias.
	plain := tickRe.ReplaceAllStringFunc(text, func(m string) string {
		inner := strings.Trim(m, "`")
		if implSet[inner] || scenarioSet[inner] || names.topologies[inner] {
			return "``"
		}
		return inner
	})
	// A quoted title ("Is Redlock safe?") is nobody's claim.
	plain = quotedRe.ReplaceAllString(plain, "")
	for _, a := range names.aliases {
		if a.re.MatchString(plain) {
			locks[a.impl] = true
		}
	}
	for l := range locks {
		c.Locks = append(c.Locks, l)
	}
	sort.Strings(c.Locks)
	for _, fw := range FaultWords {
		if fw.Re.MatchString(plain) {
			c.Faults = append(c.Faults, fw.Scenarios)
		}
	}
	switch {
	case unfencedRe.MatchString(plain):
		c.Fencing = []bool{false}
	case fencedRe.MatchString(tokenWordRe.ReplaceAllString(plain, "token")):
		c.Fencing = []bool{true}
	case fencingRe.MatchString(plain):
		c.Fencing = []bool{false, true}
	default:
		c.Fencing = []bool{false}
	}
	for _, loc := range verdictWordRe.FindAllStringIndex(plain, -1) {
		v := checker.Claimed(plain[loc[0]:loc[1]])
		if negationRe.MatchString(plain[:loc[0]]) {
			c.Denies = appendOnce(c.Denies, v)
		} else {
			c.Says = appendOnce(c.Says, v)
		}
	}
	return c
}

// claimWordsRe finds the words that claim a verdict, whole and in any
// case; which verdict each claims is the checker's to say (checker.Claimed).
func claimWordsRe() *regexp.Regexp {
	words := checker.ClaimWords()
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)\b`)
}

// claimNames are the names a clause is read against, built once: every
// clause of every page asks for them, and the registries and Aliases do
// not change after init.
var claimNames = sync.OnceValue(func() (n struct {
	impls, scenarios, topologies map[string]bool
	aliases                      []struct {
		re   *regexp.Regexp
		impl string
	}
}) {
	n.impls, n.scenarios, n.topologies = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, t := range topology.All() {
		n.topologies[t.Name] = true
	}
	for _, name := range impls.Names() {
		n.impls[name] = true
	}
	for _, name := range scenarios.Names() {
		n.scenarios[name] = true
	}
	for alias, impl := range Aliases {
		n.aliases = append(n.aliases, struct {
			re   *regexp.Regexp
			impl string
		}{regexp.MustCompile(`\b` + regexp.QuoteMeta(alias) + `\b`), impl})
	}
	return n
})

func appendOnce(vs []checker.Verdict, v checker.Verdict) []checker.Verdict {
	if slices.Contains(vs, v) {
		return vs
	}
	return append(vs, v)
}

// Contradictions holds every claim of a page to the evidence: for each lock
// and fault the clause names, some measured cell must confirm each verdict
// it says, and none may show one it denies where every cell shows it. A
// claim no cell measures is unsupported, which is a problem too: a run
// must say it. recs are the page's runs, by id, for the clauses beside a
// run's block. A clause is held to the cells of the topologies it names,
// or to the single server's when it names none.
func Contradictions(page string, ev []Evidence, recs map[string]Record) []string {
	return contradictions(page, ev, recs, false)
}

// ContradictionsEverywhere holds a page that speaks of every topology
// (the decision page) to the whole matrix, and more strictly, so that no
// lock reads safer there than some cell shows it: a clause that names no
// topology is held to every topology's cells; a verdict it denies must
// show in none of them, and "safe" must be what every one that applies
// shows.
func ContradictionsEverywhere(page string, ev []Evidence, recs map[string]Record) []string {
	return contradictions(page, ev, recs, true)
}

func contradictions(page string, ev []Evidence, recs map[string]Record, everywhere bool) []string {
	var out []string
	for _, c := range Claims(page) {
		out = append(out, c.problems(ev, recs, everywhere)...)
	}
	return out
}

// onTopology reports whether evidence speaks to a clause: on a topology
// the clause names, or, when it names none, on the single server (on
// every topology, everywhere).
func (c Claim) onTopology(e Evidence, everywhere bool) bool {
	t := topology.Or(e.Topology)
	if len(c.Topologies) > 0 {
		return slices.Contains(c.Topologies, t)
	}
	// A page's own run counts as before topologies were read: the page
	// shows it, and its block names its topology.
	return everywhere || t == topology.SingleName || strings.HasPrefix(e.Source, "run ")
}

func (c Claim) problems(ev []Evidence, recs map[string]Record, everywhere bool) []string {
	type target struct {
		lock   string
		faults []string
	}
	var targets []target
	faults := c.Faults
	if len(c.Locks) == 0 || len(faults) == 0 {
		// The sentence about a figure: it speaks of the run beside it.
		var besideFaults []string
		for _, id := range c.Runs {
			if r, ok := recs[id]; ok {
				besideFaults = append(besideFaults, r.Scenario)
			}
		}
		if len(faults) == 0 {
			faults = [][]string{besideFaults}
		}
	}
	locks := c.Locks
	if len(locks) == 0 {
		for _, id := range c.Runs {
			if r, ok := recs[id]; ok {
				locks = appendString(locks, r.Impl)
			}
		}
	}
	for _, l := range locks {
		for _, f := range faults {
			targets = append(targets, target{l, f})
		}
	}
	var out []string
	for _, t := range targets {
		var cells []Evidence
		for _, e := range ev {
			if e.Impl == t.lock && slices.Contains(t.faults, e.Scenario) && slices.Contains(c.Fencing, e.Fencing) {
				cells = append(cells, e)
			}
		}
		if len(c.Locks) == 0 {
			// A clause about the run beside it is held to that run alone.
			var own []Evidence
			for _, e := range cells {
				for _, id := range c.Runs {
					if e.Source == "run "+id {
						own = append(own, e)
					}
				}
			}
			cells = own
		} else {
			var on []Evidence
			for _, e := range cells {
				if c.onTopology(e, everywhere) {
					on = append(on, e)
				}
			}
			cells = on
		}
		what := fmt.Sprintf("%s under %s", t.lock, strings.Join(t.faults, "|"))
		if len(c.Topologies) > 0 {
			what += " on " + strings.Join(c.Topologies, ", ")
		}
		if len(cells) == 0 {
			if len(c.Locks) > 0 {
				out = append(out, fmt.Sprintf("%q: says %s of %s, which no matrix cell or run of the page measures", c.Text, verdictList(c.Says, c.Denies), what))
			}
			continue
		}
		for _, v := range c.Says {
			ok, every := false, true
			for _, e := range cells {
				ok = ok || checker.Confirms(v, e.Verdict)
				every = every && (checker.Confirms(v, e.Verdict) || !checker.Applicable(e.Verdict))
			}
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%q: says %s is %s; measured: %s", c.Text, what, v, measured(cells)))
			case everywhere && checker.Survived(v) && !every:
				out = append(out, fmt.Sprintf("%q: says %s is safe, but not every cell is: %s", c.Text, what, measured(cells)))
			}
		}
		for _, v := range c.Denies {
			all, any := true, false
			for _, e := range cells {
				all = all && checker.Refutes(v, e.Verdict)
				any = any || checker.Refutes(v, e.Verdict)
			}
			if all || (everywhere && any) {
				out = append(out, fmt.Sprintf("%q: says %s is not %s; measured: %s", c.Text, what, v, measured(cells)))
			}
		}
	}
	return out
}

func measured(cells []Evidence) string {
	var parts []string
	for _, e := range cells {
		f := ""
		if e.Fencing {
			f = " fenced"
		}
		on := ""
		if t := topology.Or(e.Topology); t != topology.SingleName {
			on = " on " + t
		}
		parts = append(parts, fmt.Sprintf("%s%s%s %s (%s)", e.Scenario, on, f, e.Verdict, e.Source))
	}
	return strings.Join(parts, ", ")
}

func verdictList(says, denies []checker.Verdict) string {
	var parts []string
	for _, v := range says {
		parts = append(parts, string(v))
	}
	for _, v := range denies {
		parts = append(parts, "not "+string(v))
	}
	return strings.Join(parts, ", ")
}

func appendString(xs []string, s string) []string {
	if slices.Contains(xs, s) {
		return xs
	}
	return append(xs, s)
}

var (
	// measuredRe reads a run block's sentence, its TTL and verdict linked
	// to the glossary where they are the page's first use of the word.
	measuredRe = regexp.MustCompile(`Measured \(seed (-?\d+), (?:\[TTL\]\(glossary\.md#ttl\)|TTL) ([^,]+), [^)]*\): \*\*\[?([a-z/ ]+?)(?:\]\(glossary\.md#[a-z-]+\))?\*\*\. The lab expects \[?([a-z/ ]+?)(?:\]\(glossary\.md#[a-z-]+\))?:`)
	svgLinkRe  = regexp.MustCompile(`!\[[^\]]*\]\((img/[^)]+\.svg)\)`)
	svgTitleRe = regexp.MustCompile(`\(seed (-?\d+)\): ([a-z/ ]+)</text>`)
)

// FigureProblems holds every run block of a page to its record and its
// timeline: the sentence's seed, TTL and verdict must be the run's, the
// warning must stand exactly where the run differs from the expectation,
// and the timeline the block shows must be titled with the same seed and
// verdict. readFile reads a file relative to the pages.
func FigureProblems(page string, recs map[string]Record, readFile func(rel string) ([]byte, error)) []string {
	var out []string
	for _, m := range blockRe.FindAllStringSubmatch(page, -1) {
		id, ok := strings.CutPrefix(m[1], "run:")
		if !ok {
			continue
		}
		block := m[0]
		rec, ok := recs[id]
		if !ok {
			if !strings.Contains(block, "Not run yet") {
				out = append(out, fmt.Sprintf("run %s: the page shows a run that docs/lessons/runs.json does not hold", id))
			}
			continue
		}
		s := measuredRe.FindStringSubmatch(block)
		if s == nil {
			out = append(out, fmt.Sprintf("run %s: no \"Measured (seed …, TTL …): **verdict**\" sentence", id))
			continue
		}
		seed, ttl, verdict, expected := s[1], s[2], checker.Verdict(s[3]), checker.Verdict(s[4])
		if seed != fmt.Sprint(rec.Seed) || ttl != rec.TTL || verdict != rec.Verdict || expected != rec.Expected {
			out = append(out, fmt.Sprintf("run %s: the sentence says seed %s, TTL %s, %s (expected %s); the run was seed %d, TTL %s, %s (expected %s)",
				id, seed, ttl, verdict, expected, rec.Seed, rec.TTL, rec.Verdict, rec.Expected))
		}
		if warned := strings.Contains(block, "⚠"); warned == checker.Agrees(expected, verdict) {
			out = append(out, fmt.Sprintf("run %s: %s against the expected %s, but the warning is %s", id, verdict, expected, map[bool]string{true: "there", false: "missing"}[warned]))
		}
		img := svgLinkRe.FindStringSubmatch(block)
		if img == nil {
			if rec.SVG != "" {
				out = append(out, fmt.Sprintf("run %s: the run drew %s but the block shows no timeline", id, rec.SVG))
			}
			continue
		}
		svg, err := readFile(img[1])
		if err != nil {
			out = append(out, fmt.Sprintf("run %s: timeline %s: %v", id, img[1], err))
			continue
		}
		t := svgTitleRe.FindSubmatch(svg)
		if t == nil {
			out = append(out, fmt.Sprintf("run %s: timeline %s has no \"(seed N): verdict\" title", id, img[1]))
			continue
		}
		if string(t[1]) != seed || checker.Verdict(t[2]) != verdict {
			out = append(out, fmt.Sprintf("run %s: the sentence says seed %s, %s; its timeline %s is of seed %s, %s", id, seed, verdict, img[1], t[1], t[2]))
		}
	}
	return out
}
