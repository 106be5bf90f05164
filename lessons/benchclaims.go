package lessons

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/locklab/locklab/record"
)

// A sentence that says one lock is faster or cheaper than another is a
// claim about results/bench.json, as a verdict sentence is about the
// matrix. The decision page once called SET NX PX "the cheapest correct
// choice" above a table in which other correct locks measured faster, and
// nothing held it. BenchClaimProblems holds such sentences to the
// benchmark's medians and their 95% intervals: a difference inside the
// noise (the intervals overlap) must say so, and a sentence that calls two
// locks alike must have them overlap.

var (
	fasterRe      = regexp.MustCompile(`(?i)\b(faster|quicker|cheaper|more pairs)\b`)
	slowerRe      = regexp.MustCompile(`(?i)\b(slower|costlier|more expensive|fewer pairs)\b`)
	superlRe      = regexp.MustCompile(`(?i)\b(fastest|cheapest|quickest)\b`)
	notSuperlRe   = regexp.MustCompile(`(?i)\bnot\b[^.;]*\b(fastest|cheapest|quickest)\b`)
	noiseRe       = regexp.MustCompile(`(?i)\b(inside|within) the noise\b|\bas (fast|quick|cheap) as\b|\bindistinguishable\b`)
	uncontRe      = regexp.MustCompile(`(?i)\buncontended\b|\balone\b|\bper acquire\b`)
	contRe        = regexp.MustCompile(`(?i)\bcontended\b|\bunder contention\b`)
	handoffRe     = regexp.MustCompile(`(?i)\bhand-?off\b`)
	recoverWordRe = regexp.MustCompile(`(?i)\brecover`)
	// "ahead" and "behind" also say where a clock runs or who waits for
	// whom: they compare speed only in a clause about measurements.
	aheadRe        = regexp.MustCompile(`(?i)\bahead of\b|\bis ahead\b`)
	behindRe       = regexp.MustCompile(`(?i)\bbehind\b`)
	speedContextRe = regexp.MustCompile(`(?i)\bbench(mark|\.json)?\b|\bpairs\b|\bnoise\b|\bmeasur|\bper acquire\b|\b(un)?contended\b|\bthroughput\b`)
	// differRe is a claim that two locks measured apart: "most of the
	// difference between", "the gap between".
	differRe = regexp.MustCompile(`(?i)\b(most|much|all|part|some|the whole) of the (difference|gap)\b|\bthe (difference|gap) between\b|\bmeasur\w* (apart|differently)\b`)
)

// SpeedAliases are the plain names the pages use for a lock when they talk
// of its speed ("a single Redis" is the one-node lock, redis-setnx-px):
// read only for speed and cost, so they add no verdict claims.
var SpeedAliases = map[string]*regexp.Regexp{
	"redis-setnx-px": regexp.MustCompile("(?i)`?SET NX PX`?|\\bsingle Redis\\b"),
	"zookeeper":      regexp.MustCompile(`\bZooKeeper locks?\b`),
}

// benchMetric is one figure a comparison can be held to; higher is better
// unless lower says otherwise.
type benchMetric struct {
	name  string
	lower bool
	get   func(record.BenchResult) (record.Stat, bool)
}

var (
	uncontendedMetric = benchMetric{"uncontended pairs/s", false, func(r record.BenchResult) (record.Stat, bool) {
		if r.Uncontended == nil {
			return record.Stat{}, false
		}
		return r.Uncontended.PairsPerSec, true
	}}
	contendedMetric = benchMetric{"contended pairs/s", false, func(r record.BenchResult) (record.Stat, bool) {
		if r.Contended == nil {
			return record.Stat{}, false
		}
		return r.Contended.PairsPerSec, true
	}}
	handoffMetric = benchMetric{"contended hand-off p50", true, func(r record.BenchResult) (record.Stat, bool) {
		if r.Contended == nil {
			return record.Stat{}, false
		}
		return r.Contended.HandoffP50, true
	}}
	recoveryMetric = benchMetric{"recovery after a holder crash", true, func(r record.BenchResult) (record.Stat, bool) {
		if r.Recovery == nil || r.Recovery.Seconds == nil {
			return record.Stat{}, false
		}
		s := *r.Recovery.Seconds // one measurement: its interval is the point
		return record.Stat{Median: s, Min: s, Max: s}, true
	}}
)

// interval is a figure's 95% interval (interval95), or its trials' range
// when the benchmark had too few trials for one.
func interval(s record.Stat) (lo, hi float64) {
	if lo, hi, ok := interval95(s); ok {
		return lo, hi
	}
	return s.Min, s.Max
}

// better compares a and b on m: 1 when a is better beyond the noise, -1
// when worse, 0 when the intervals overlap.
func better(m benchMetric, a, b record.Stat) int {
	alo, ahi := interval(a)
	blo, bhi := interval(b)
	switch {
	case alo > bhi:
		if m.lower {
			return -1
		}
		return 1
	case ahi < blo:
		if m.lower {
			return 1
		}
		return -1
	}
	return 0
}

// namedLocks lists the locks a clause names, in the order it names them.
func namedLocks(clause string) []string {
	names := claimNames()
	type at struct {
		pos  int
		lock string
	}
	var found []at
	for _, m := range tickRe.FindAllStringSubmatchIndex(clause, -1) {
		if w := clause[m[2]:m[3]]; names.impls[w] {
			found = append(found, at{m[0], w})
		}
	}
	for _, a := range names.aliases {
		if loc := a.re.FindStringIndex(clause); loc != nil {
			found = append(found, at{loc[0], a.impl})
		}
	}
	for lock, re := range SpeedAliases {
		if loc := re.FindStringIndex(clause); loc != nil {
			found = append(found, at{loc[0], lock})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	var out []string
	for _, f := range found {
		out = appendString(out, f.lock)
	}
	return out
}

// benchClause is one hand-written clause that compares locks on speed or
// cost: the locks it names, in order, and what it says of them.
type benchClause struct {
	text              string
	locks             []string
	metrics           []benchMetric
	faster, slower    bool
	noise             bool // "inside the noise", "as fast as": the intervals overlap
	differ            bool // "most of the difference between": the intervals do not
	superl, notSuperl bool
	benchCited        bool // the clause speaks of measurements
}

// benchClauses finds every clause of a page's prose that compares locks
// on speed or cost.
func benchClauses(page string) []benchClause {
	var out []benchClause
	for _, para := range paragraphs(Prose(page)) {
		if strings.HasPrefix(para, "#") {
			continue
		}
		for _, cl := range clauses(para) {
			if bc, ok := parseBenchClause(cl); ok {
				out = append(out, bc)
			}
		}
	}
	return out
}

func parseBenchClause(cl string) (benchClause, bool) {
	speedWords := speedContextRe.MatchString(cl)
	bc := benchClause{
		text:       cl,
		faster:     fasterRe.MatchString(cl) || speedWords && aheadRe.MatchString(cl),
		slower:     slowerRe.MatchString(cl) || speedWords && behindRe.MatchString(cl),
		noise:      noiseRe.MatchString(cl),
		superl:     superlRe.MatchString(cl),
		notSuperl:  notSuperlRe.MatchString(cl),
		benchCited: speedWords,
	}
	bc.differ = differRe.MatchString(cl) && !bc.noise
	if !bc.faster && !bc.slower && !bc.noise && !bc.superl && !bc.differ {
		return benchClause{}, false
	}
	bc.locks = namedLocks(cl)
	switch {
	case handoffRe.MatchString(cl):
		bc.metrics = append(bc.metrics, handoffMetric)
	case recoverWordRe.MatchString(cl):
		bc.metrics = append(bc.metrics, recoveryMetric)
	}
	if uncontRe.MatchString(cl) {
		bc.metrics = append(bc.metrics, uncontendedMetric)
	}
	if contRe.MatchString(cl) && !handoffRe.MatchString(cl) {
		bc.metrics = append(bc.metrics, contendedMetric)
	}
	if len(bc.metrics) == 0 {
		bc.metrics = []benchMetric{uncontendedMetric, contendedMetric}
	}
	return bc, true
}

// BenchClaimProblems holds every hand-written clause of a page that
// compares locks on speed or cost to the benchmark.
func BenchClaimProblems(page string, b *Bench) []string {
	var out []string
	for _, bc := range benchClauses(page) {
		out = append(out, benchClaim(bc, b)...)
	}
	return out
}

func benchClaim(bc benchClause, b *Bench) []string {
	cl, locks := bc.text, bc.locks
	if len(locks) == 0 && !(bc.differ && bc.benchCited) {
		return nil // a general remark (a watchdog makes recovery slower) names nothing to measure
	}
	if !bc.superl && len(locks) < 2 {
		return []string{fmt.Sprintf("%q: compares speed or cost but names %s: name both, so the benchmark can hold it", cl, map[bool]string{true: "no lock", false: "one lock"}[len(locks) == 0])}
	}
	if b == nil {
		return []string{fmt.Sprintf("%q: compares speed or cost, and results/bench.json is missing", cl)}
	}
	stat := func(m benchMetric, lock string) (record.Stat, error) {
		r, ok := findBench(b, lock)
		if !ok {
			return record.Stat{}, fmt.Errorf("%s is not in results/bench.json", lock)
		}
		s, ok := m.get(r)
		if !ok {
			return record.Stat{}, fmt.Errorf("results/bench.json has no %s for %s", m.name, lock)
		}
		return s, nil
	}
	var out []string
	subject := locks[0]
	for _, m := range bc.metrics {
		a, err := stat(m, subject)
		if err != nil {
			out = append(out, fmt.Sprintf("%q: %v", cl, err))
			continue
		}
		if bc.superl {
			// Against every correct lock the benchmark measured on a server.
			best := true
			for _, r := range b.Impls {
				if r.Name == subject || r.Broken != "" || r.Backend == "in-process" || r.Backend == "none" {
					continue
				}
				if o, ok := m.get(r); ok && better(m, a, o) != 1 {
					best = false
				}
			}
			if best == bc.notSuperl {
				out = append(out, fmt.Sprintf("%q: says %s is %sthe best on %s; results/bench.json says it is %s", cl, subject,
					map[bool]string{true: "not ", false: ""}[bc.notSuperl], m.name, map[bool]string{true: "better beyond the noise than every other correct lock", false: "not better beyond the noise than every other correct lock"}[best]))
			}
			continue
		}
		for _, other := range locks[1:] {
			o, err := stat(m, other)
			if err != nil {
				out = append(out, fmt.Sprintf("%q: %v", cl, err))
				continue
			}
			got := better(m, a, o)
			alo, ahi := interval(a)
			blo, bhi := interval(o)
			measured := fmt.Sprintf("%s %s %s [%s–%s] against %s %s [%s–%s]", m.name, subject, num(a.Median), num(alo), num(ahi), other, num(o.Median), num(blo), num(bhi))
			switch {
			case bc.noise && got != 0:
				out = append(out, fmt.Sprintf("%q: says %s and %s are inside the noise; they are not: %s", cl, subject, other, measured))
			case !bc.noise && got == 0:
				out = append(out, fmt.Sprintf("%q: compares %s with %s, but the difference is inside the noise (the 95%% intervals overlap), and the sentence does not say so: %s", cl, subject, other, measured))
			case !bc.noise && bc.faster && !bc.slower && got < 0, !bc.noise && bc.slower && !bc.faster && got > 0:
				out = append(out, fmt.Sprintf("%q: the comparison of %s with %s runs the wrong way: %s", cl, subject, other, measured))
			}
		}
	}
	return out
}
