package lessons

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The pages use words a learner may not know (porcupine, linearizable,
// unknown outcome) and print figures under names of the lab's own
// (fault-ms, other-read-during-fault-ms). docs/lessons/glossary.md defines
// them, by hand; Glossary says which entry defines which word and figure
// name, so a test can fail on a page whose first use of a term does not
// link its entry, and on a figure name or table heading no entry defines.

// Term is one glossary entry.
type Term struct {
	Anchor string // the entry's id on glossary.md
	// Use matches the term where a page uses it; the first use on every
	// page must be a link to the entry. nil for a term that is only a
	// table heading (its table's opening sentence links the glossary).
	Use *regexp.Regexp
	// Names are the figure names and table headings the entry defines.
	Names []string
}

// Glossary lists the entries of glossary.md.
var Glossary = []Term{
	// Not the start of a figure's name (lease-left-ms) or of its entry's
	// anchor: a run's figures may name it before the page's prose uses
	// the word.
	{Anchor: "lease", Use: regexp.MustCompile(`(?i)\bleases?\b(?:[^-]|$)`)},
	{Anchor: "ttl", Use: regexp.MustCompile(`\bTTLs?\b`)},
	{Anchor: "fencing-token", Use: regexp.MustCompile(`(?i)\bfencing tokens?\b`), Names: []string{"fencing tokens", "fencing"}},
	{Anchor: "quorum", Use: regexp.MustCompile(`(?i)\bquorums?\b`)},
	{Anchor: "failpoint", Use: regexp.MustCompile(`(?i)\bfailpoints?\b`)},
	{Anchor: "guest", Use: regexp.MustCompile(`(?i)\bguests?\b(?:[^:/.-]|$)`)},
	{Anchor: "peer", Use: regexp.MustCompile(`(?i)\bpeers?\b(?:[^:-]|$)`)},
	{Anchor: "safe", Names: []string{"safe", "unsafe", "verdict", "expected"}},
	{Anchor: "stuck", Use: regexp.MustCompile(`\bstuck\b`), Names: []string{"stuck"}},
	{Anchor: "unavailable", Use: regexp.MustCompile(`\bunavailable\b`), Names: []string{"unavailable"}},
	{Anchor: "inconclusive", Use: regexp.MustCompile(`(?i)\binconclusive\b`), Names: []string{"inconclusive"}},
	{Anchor: "unknown", Names: []string{"unknown"}},
	{Anchor: "n-a", Use: regexp.MustCompile(`(?:^|[^\w/])n/a\b`), Names: []string{"n/a"}},
	{Anchor: "danger-window", Use: regexp.MustCompile(`(?i)\bnot exercised\b|\bdanger window\b`), Names: []string{"not exercised", "exercised"}},
	{Anchor: "late-takeovers", Use: regexp.MustCompile(`\blate-takeovers\b`), Names: []string{"late-takeovers"}},
	{Anchor: "lease-left-ms", Use: regexp.MustCompile(`\blease-left-ms\b|\bheld-before-fault-ms\b`), Names: []string{"lease-left-ms", "held-before-fault-ms"}},
	{Anchor: "porcupine", Use: regexp.MustCompile(`(?i)\bporcupine\b`)},
	{Anchor: "linearizable", Use: regexp.MustCompile(`(?i)\blinearizab(le|ility)\b`)},
	{Anchor: "sections-checked", Use: regexp.MustCompile(`(?i)\bsections checked\b|\bchecked \d+ critical sections\b`), Names: []string{"sections checked", "runs"}},
	{Anchor: "unknown-outcome", Use: regexp.MustCompile(`(?i)\bunknown outcomes?\b|\boutcome (is|was) unknown\b`)},
	{Anchor: "recovery", Use: regexp.MustCompile(`(?i)\brecovery(?:[^-a-z]|$)`), Names: []string{"recovery", "holder crash"}},
	{Anchor: "timeline", Use: regexp.MustCompile(`(?i)\b(interactive|HTML) timeline\b`)},
	{Anchor: "figures", Names: []string{"figures"}},
	{Anchor: "fault-ms", Use: regexp.MustCompile(`\bfault-ms\b`), Names: []string{"fault-ms"}},
	{Anchor: "other-read-during-fault-ms", Use: regexp.MustCompile(`\bother-read-during-fault-ms\b`), Names: []string{"other-read-during-fault-ms"}},
	{Anchor: "recovery-ms", Use: regexp.MustCompile(`\brecovery-ms\b`), Names: []string{"recovery-ms"}},
	{Anchor: "lost-notice-ms", Use: regexp.MustCompile(`\blost-notice-ms\b`), Names: []string{"lost-notice-ms"}},
	{Anchor: "next-grant-ms", Use: regexp.MustCompile(`\bnext-grant-ms\b`), Names: []string{"next-grant-ms"}},
	{Anchor: "grants-cut", Use: regexp.MustCompile(`\bgrants-(minority|majority)-cut\b`), Names: []string{"grants-minority-cut", "grants-majority-cut"}},
	{Anchor: "split-figures", Use: regexp.MustCompile(`\bgrants-(old|new)-side\b|\b(old-side-last|new-side-first)-grant-ms\b|\bpromoted-ms\b|\bsplit-ms\b`),
		Names: []string{"grants-old-side", "grants-new-side", "old-side-last-grant-ms", "new-side-first-grant-ms", "promoted-ms", "split-ms"}},
	{Anchor: "old-primary-figures", Use: regexp.MustCompile(`\bold-primary-[a-z-]+\b`),
		Names: []string{"old-primary-commits", "old-primary-last-commit-ms", "old-primary-longest-commit-ms", "old-primary-waiting-from-ms",
			"old-primary-commits-refused", "old-primary-refused-from-ms"}},
	{Anchor: "re-entry-figures", Use: regexp.MustCompile(`\bre-entry(-max)?-ms\b|\bunprotected-sections\b`), Names: []string{"re-entry-ms", "re-entry-max-ms", "unprotected-sections"}},
	{Anchor: "coupon-figures", Use: regexp.MustCompile(`\bsales-per-s\b`), Names: []string{"sales-per-s", "stock", "sold", "oversold", "sales/s", "remaining"}},
	{Anchor: "pairs-per-s", Names: []string{"uncontended acquire+release pairs/s", "contended pairs/s", "uncontended pairs/s"}},
	{Anchor: "95-interval", Use: regexp.MustCompile(`\b95 ?% interval`), Names: []string{"median [95 % interval]", "the intervals"}},
	{Anchor: "acquire-p99", Names: []string{"uncontended acquire p99"}},
	{Anchor: "hand-off", Names: []string{"contended hand-off p50"}},
	{Anchor: "bench-recovery", Names: []string{"recovery after a holder crash"}},
	{Anchor: "fairness", Names: []string{"grants back to the releaser", "Jain's index", "wait p50", "wait p99", "longest wait", "waiters"}},
	{Anchor: "server-cost", Names: []string{"server cost per acquisition"}},
	{Anchor: "takeover", Names: []string{"GETSETs per race (mean, max)", "races where a loser's GETSET landed", "key holds a loser's expiry, not the winner's",
		"winner's Refresh refused while it holds the lock", "stored minus granted expiry (min, max)", "rounds"}},
	{Anchor: "split-vote-figures", Names: []string{"after a lost attempt", "split votes (no first attempt won)", "unresolved",
		"time to the first grant, median (max), every round", "the same, split rounds only"}},
	{Anchor: "nodes-stalled-figures", Names: []string{"nodes stalled", "acquires granted", "acquire p50 / p99 / max",
		"acquire and release p50 / max", "refused", "first refusal took"}},
	{Anchor: "slow-script-figures", Names: []string{"window", "GETs", "p50", "p99", "max", "the script's EVAL took", "GETs held through",
		"lease", "refresh sent after the grant", "refresh answered in", "refresh", "second client took the lock"}},
	{Anchor: "waiting-budget-figures", Names: []string{"work per grant", "the others' work, queued", "gave up",
		"granted wait p50 / p99 / max", "least validity left at a grant"}},
	{Anchor: "ephemeral-node-figures", Names: []string{"the holder", "trials", "node deleted after (each trial)"}},
}

// notFigures are the table headings that name what a row is, not a
// measurement: no entry needs to define them.
var notFigures = map[string]bool{
	"implementation": true, "scenario": true, "clients": true,
	"backend": true, "lock": true, "kind": true, "page": true, "also on": true,
	"claim": true, "what it says": true, "each sale": true, "statement(s)": true, "coupon sale": true, "settings": true,
	"clients' clocks": true, "topology": true, "paused past TTL": true, "paused, fenced": true, "slow past TTL": true,
	"lock server lost": true, "figure": true,
}

// glossaryLinkRe finds a link to a glossary entry, on a lesson page.
var glossaryLinkRe = regexp.MustCompile(`\[[^\]]*\]\(glossary\.md#([a-z0-9-]+)\)`)

// GlossaryLinkProblems finds the terms whose first use on a page is not a
// link to their glossary entry. The generated blocks count: where one
// uses a term first, the generator links it.
func GlossaryLinkProblems(page string) []string {
	text := usesOnly(page)
	links := glossaryLinkRe.FindAllStringSubmatchIndex(text, -1)
	var out []string
	for _, t := range Glossary {
		if t.Use == nil {
			continue
		}
		loc := t.Use.FindStringIndex(text)
		if loc == nil {
			continue
		}
		linked := false
		for _, l := range links {
			if text[l[2]:l[3]] == t.Anchor && loc[0] < l[1] && l[0] < loc[1] {
				linked = true
			}
		}
		if !linked {
			from := max(0, loc[0]-40)
			out = append(out, fmt.Sprintf("the first use of %q (…%s…) is not a link to glossary.md#%s",
				text[loc[0]:loc[1]], strings.Join(strings.Fields(text[from:min(len(text), loc[1]+20)]), " "), t.Anchor))
		}
	}
	return out
}

// usesOnly blanks, keeping every offset, what is no use of a word in the
// page's text: code blocks and inline code (a name, `guest:curator`),
// comments, headings (a title names a topic; its page links the word
// where it explains it), table rows (a value in a column whose heading
// the glossary defines), and the text of links other than the
// glossary's (a page title in a "Next:" link).
func usesOnly(page string) string {
	blank := func(m string) string { return strings.Repeat(" ", len(m)) }
	text := codeFenceRe.ReplaceAllStringFunc(page, blank)
	text = commentRe.ReplaceAllStringFunc(text, blank)
	text = inlineCodeRe.ReplaceAllStringFunc(text, blank)
	text = headingOrRowRe.ReplaceAllStringFunc(text, blank)
	return otherLinkRe.ReplaceAllStringFunc(text, func(m string) string {
		if strings.Contains(m, "](glossary.md#") {
			return m
		}
		return blank(m)
	})
}

var (
	inlineCodeRe   = regexp.MustCompile("`[^`\n]*`")
	headingOrRowRe = regexp.MustCompile(`(?m)^(#|\|).*$`)
	otherLinkRe    = regexp.MustCompile(`!?\[[^\]]*\]\([^)]*\)`)
)

// glossaryEntry finds the entry that defines a figure name or heading
// ("" when none does); a heading's settings in brackets, "(TTL 2s)", are
// not part of its name.
func glossaryEntry(name string) string {
	name = strings.TrimSpace(ttlSuffixRe.ReplaceAllString(name, ""))
	for _, t := range Glossary {
		for _, n := range t.Names {
			if n == name {
				return t.Anchor
			}
		}
	}
	return ""
}

var ttlSuffixRe = regexp.MustCompile(` \(TTL [^)]*\)$`)

// glossaryLink renders a figure name linked to its entry (plain when no
// entry defines it, which a test fails).
func glossaryLink(name string) string {
	if a := glossaryEntry(name); a != "" {
		return fmt.Sprintf("[%s](glossary.md#%s)", name, a)
	}
	return name
}

// tableHeadings lists the headings of every table in the generated blocks
// of a page.
func tableHeadings(page string) []string {
	var out []string
	for _, blk := range blockRe.FindAllString(page, -1) {
		lines := strings.Split(blk, "\n")
		for i := 0; i+1 < len(lines); i++ {
			if !tableRuleRe.MatchString(lines[i+1]) {
				continue
			}
			for _, h := range strings.Split(strings.Trim(strings.TrimSpace(lines[i]), "|"), "|") {
				out = append(out, strings.TrimSpace(h))
			}
		}
	}
	return out
}

var tableRuleRe = regexp.MustCompile(`^\|(-+\|)+$`)

// LinkFirstUses links, in a page's generated blocks, the first use of
// every glossary term whose first use on the page falls in one: the
// generator's text (a lock's summary, a run's sentence, the expectation
// it quotes) names the lab's words before the hand-written prose may, and
// GlossaryLinkProblems holds the page to its first use wherever it is.
func LinkFirstUses(page string) string {
	for _, t := range Glossary {
		if t.Use == nil {
			continue
		}
		text := usesOnly(page)
		loc := t.Use.FindStringSubmatchIndex(text)
		if loc == nil {
			continue
		}
		start, end := loc[0], loc[1]
		// The word itself, without what the pattern reads around it
		// ("n/a" after a space, "guest" before one).
		for start < end && !isWordByte(page[start]) {
			start++
		}
		for end > start && !isWordByte(page[end-1]) {
			end--
		}
		word := page[start:end]
		linked := false
		for _, l := range glossaryLinkRe.FindAllStringSubmatchIndex(text, -1) {
			if text[l[2]:l[3]] == t.Anchor && start < l[1] && l[0] < end {
				linked = true
			}
		}
		if linked || !inGeneratedBlock(page, start) {
			continue
		}
		page = page[:start] + fmt.Sprintf("[%s](glossary.md#%s)", word, t.Anchor) + page[end:]
	}
	return page
}

func isWordByte(b byte) bool {
	return b == '/' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// inGeneratedBlock reports whether offset at falls inside a generated
// block of page.
func inGeneratedBlock(page string, at int) bool {
	for _, b := range blockRe.FindAllStringIndex(page, -1) {
		if b[0] <= at && at < b[1] {
			return true
		}
	}
	return false
}

// tableVerdicts lists the verdict words of every verdict cell of a page's
// generated tables: a cell under "verdict" or "expected", or under a
// decision column (a fault family or a deployment), each of its lines
// ("unsafe<br>fenced: safe") without its link, count and the scenarios
// named beside it. "·" and "–" mean no cell.
func tableVerdicts(page string) []string {
	var out []string
	for _, blk := range blockRe.FindAllString(page, -1) {
		lines := strings.Split(blk, "\n")
		var head []string
		for i, line := range lines {
			if i+1 < len(lines) && tableRuleRe.MatchString(lines[i+1]) {
				head = splitRow(line)
				continue
			}
			if !strings.HasPrefix(line, "|") || tableRuleRe.MatchString(line) || head == nil {
				continue
			}
			for j, cell := range splitRow(line) {
				// A decision column only in the decision table (the sale's
				// table has a "coupon sale" column of its own).
				decision := familyHeading(head[j%len(head)]) && slices.Contains(head, "fencing tokens")
				if j >= len(head) || !(head[j] == "verdict" || head[j] == "expected" || decision) {
					continue
				}
				for _, part := range strings.Split(cell, "<br>") {
					part = strings.TrimPrefix(strings.TrimSpace(part), "fenced: ")
					part = linkTextRe.ReplaceAllString(part, "$1")
					part = subRe.ReplaceAllString(part, "")
					part = countRe.ReplaceAllString(part, "")
					if part = strings.TrimSpace(part); part != "" && part != "·" && part != "–" {
						out = appendString(out, part)
					}
				}
			}
		}
	}
	return out
}

func splitRow(line string) []string {
	var out []string
	for _, c := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

var (
	subRe   = regexp.MustCompile(`\s*<sub>.*?</sub>`)
	countRe = regexp.MustCompile(`\s*\(\d+ of \d+ exercised\)`)
)
