package lessons

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
)

// A number in a page's hand-written prose is a figure a learner takes on
// trust, and the pages printed figures no file held: "1 of 3 in the
// committed ensemble matrix" beside a cell of 2 of 3, "a second longer
// than a lease" beside a cut of four, "2.5 TTLs and half a second" that
// no scenario declares. DigitProblems holds every digit of the prose to a
// file the page prints: the number must appear in the page's generated
// blocks (which are the runs', the matrix's, the benchmark's and the
// sale's, as their files have them), and a count of runs ("2 of 3") must
// be a count of a quoted cell's runs, or a lock's quorum of its nodes.
// What a digit labels rather than measures is no figure: a lesson's
// number, a list item's, a version, a year, a node's name.

var (
	numberRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	// ofRe is a count of runs or nodes: "2 of 3".
	ofRe = regexp.MustCompile(`\b(\d+) of (\d+)\b`)
	// labelRes match the digits that name a thing rather than measure it.
	labelRes = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\blessons? \d+(?:(?:,| and| or) \d+)*`),
		regexp.MustCompile(`(?i)\b(?:issue|page|rule|step) #?\d+`),
		regexp.MustCompile(`^\d+\.(?:\s|$)`),                                // a list item's number
		regexp.MustCompile(`\b[a-z]+-\d+\b`),                                // a host's or client's name: redis-4
		regexp.MustCompile(`(?i)\bclient \d+\b`),                            // the lab's clients are numbered
		regexp.MustCompile(`\btoken #\d+`),                                  // a token's value in a timeline
		regexp.MustCompile(`\b\d+\.\d+\.\d+\b`),                             // a version
		regexp.MustCompile(`\b\d+\^\d+\b`),                                  // a power: 2^64
		regexp.MustCompile(`\b(?:19|20)\d\d\b`),                             // a year
		regexp.MustCompile(`(?:^|[^\d])[−-]1\b`),                            // a figure's "never" (glossary)
		regexp.MustCompile(`\b[A-Z][A-Za-z.]*(?:-[a-z]+)? \d+(?:\.\d+)*\b`), // a product's version: Redis 7.0, Node.js 20
	}
	sourceNameRe = regexp.MustCompile(`\b\d{3}_[0-9a-f]{16}\.txt\b|\b00\d\b`)
)

// DigitProblems lists the numbers of a page's hand-written prose that no
// file the page prints supplies. cells are the matrix cells the page
// quotes, for counts of runs.
func DigitProblems(page string, cells []record.Cell, lockNames []string) []string {
	supplied := map[string]bool{}
	for _, blk := range blockRe.FindAllString(page, -1) {
		for _, n := range numberRe.FindAllString(blk, -1) {
			supplied[normalNumber(n)] = true
		}
	}
	var out []string
	text := Prose(page)
	text = tickRe.ReplaceAllString(text, "``")
	text = linkTextOnlyRe.ReplaceAllString(text, "[]")
	text = sourceNameRe.ReplaceAllString(text, "")
	for _, para := range paragraphs(text) {
		if strings.HasPrefix(para, "#") || runMarkRe.MatchString(para) {
			continue
		}
		for _, cl := range clauses(para) {
			rest := cl
			for _, m := range ofRe.FindAllStringSubmatch(cl, -1) {
				k, _ := strconv.Atoi(m[1])
				n, _ := strconv.Atoi(m[2])
				if !countOf(k, n, claimedVerdicts(cl), cells, lockNames) {
					out = append(out, fmt.Sprintf("%q: %s of %s counts no quoted cell's runs and no lock's quorum", cl, m[1], m[2]))
				}
				rest = strings.Replace(rest, m[0], "", 1)
			}
			for _, re := range labelRes {
				rest = re.ReplaceAllString(rest, " ")
			}
			for _, n := range numberRe.FindAllString(rest, -1) {
				if !supplied[normalNumber(n)] {
					out = append(out, fmt.Sprintf("%q: %s is a figure no file the page prints supplies: fill it from its file or drop it", cl, n))
				}
			}
		}
	}
	return out
}

var linkTextOnlyRe = regexp.MustCompile(`\[[^\]]*\]`)

// normalNumber is a number without its thousands separators or a
// sentence's full stop.
func normalNumber(n string) string {
	n = strings.TrimRight(n, ".,")
	if strings.Count(n, ",") > 0 && !strings.Contains(n, ".") {
		n = strings.ReplaceAll(n, ",", "")
	}
	return n
}

// claimedVerdicts are the verdicts a clause names.
func claimedVerdicts(clause string) []checker.Verdict {
	var out []checker.Verdict
	for _, w := range verdictWordRe.FindAllString(clause, -1) {
		out = appendOnce(out, checker.Claimed(w))
	}
	return out
}

// countOf reports whether "k of n" counts a quoted cell's runs or a
// lock's quorum: k of the cell's n runs gave a verdict the clause names
// (the cell's own verdict when it names none, so "shows in 1 of 3" is the
// count of the runs that showed it), or were exercised; or k is the
// majority of a lock's n nodes.
func countOf(k, n int, says []checker.Verdict, cells []record.Cell, lockNames []string) bool {
	for _, c := range cells {
		if c.Runs != n {
			continue
		}
		if c.ExercisedRuns == k && c.ExercisedRuns > 0 {
			return true
		}
		want := says
		if len(want) == 0 {
			want = []checker.Verdict{c.Verdict}
		}
		for _, v := range want {
			count := 0
			for _, r := range c.RunVerdicts {
				if r == v {
					count++
				}
			}
			if count == k {
				return true
			}
		}
	}
	for _, name := range lockNames {
		if s, err := impls.Lookup(name); err == nil && s.Backend.Nodes == n && k == n/2+1 {
			return true
		}
	}
	return false
}

// pageCells are the matrix cells a page quotes, with and without fencing,
// on their topologies, and the locks it names, for DigitProblems.
func pageCells(p Page, all Matrix) ([]record.Cell, []string) {
	var cells []record.Cell
	names := append([]string{}, p.Impls...)
	for _, c := range p.Cells {
		impl, topo := c.lockOn()
		names = appendString(names, impl)
		for _, fenced := range []bool{false, true} {
			if r, ok := all.findOn(impl, topo, c.Scenario, fenced); ok {
				cells = append(cells, r)
			}
		}
	}
	for _, r := range p.Runs {
		names = appendString(names, r.Impl)
	}
	return cells, names
}
