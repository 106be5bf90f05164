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

// interval is a figure's 95% interval, or its trials' range when the
// benchmark had too few trials for one.
func interval(s record.Stat) (lo, hi float64) {
	if s.CILo != nil && s.CIHi != nil {
		return *s.CILo, *s.CIHi
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

// BenchClaimProblems holds every hand-written clause of a page that
// compares locks on speed or cost to the benchmark.
func BenchClaimProblems(page string, b *Bench) []string {
	var out []string
	for _, para := range paragraphs(Prose(page)) {
		if strings.HasPrefix(para, "#") {
			continue
		}
		for _, cl := range clauses(para) {
			out = append(out, benchClaim(cl, b)...)
		}
	}
	return out
}

func benchClaim(cl string, b *Bench) []string {
	faster, slower, noise := fasterRe.MatchString(cl), slowerRe.MatchString(cl), noiseRe.MatchString(cl)
	superl, notSuperl := superlRe.MatchString(cl), notSuperlRe.MatchString(cl)
	if !faster && !slower && !noise && !superl {
		return nil
	}
	locks := namedLocks(cl)
	if len(locks) == 0 {
		return nil // a general remark (a watchdog makes recovery slower) names nothing to measure
	}
	if !superl && len(locks) < 2 {
		return []string{fmt.Sprintf("%q: compares speed or cost but names one lock: name both, so the benchmark can hold it", cl)}
	}
	var metrics []benchMetric
	switch {
	case handoffRe.MatchString(cl):
		metrics = append(metrics, handoffMetric)
	case recoverWordRe.MatchString(cl):
		metrics = append(metrics, recoveryMetric)
	}
	if uncontRe.MatchString(cl) {
		metrics = append(metrics, uncontendedMetric)
	}
	if contRe.MatchString(cl) && !handoffRe.MatchString(cl) {
		metrics = append(metrics, contendedMetric)
	}
	if len(metrics) == 0 {
		metrics = []benchMetric{uncontendedMetric, contendedMetric}
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
	for _, m := range metrics {
		a, err := stat(m, subject)
		if err != nil {
			out = append(out, fmt.Sprintf("%q: %v", cl, err))
			continue
		}
		if superl {
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
			if best == notSuperl {
				out = append(out, fmt.Sprintf("%q: says %s is %sthe best on %s; results/bench.json says it is %s", cl, subject,
					map[bool]string{true: "not ", false: ""}[notSuperl], m.name, map[bool]string{true: "better beyond the noise than every other correct lock", false: "not better beyond the noise than every other correct lock"}[best]))
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
			case noise && got != 0:
				out = append(out, fmt.Sprintf("%q: says %s and %s are inside the noise; they are not: %s", cl, subject, other, measured))
			case !noise && got == 0:
				out = append(out, fmt.Sprintf("%q: compares %s with %s, but the difference is inside the noise (the 95%% intervals overlap), and the sentence does not say so: %s", cl, subject, other, measured))
			case !noise && faster && !slower && got < 0, !noise && slower && !faster && got > 0:
				out = append(out, fmt.Sprintf("%q: the comparison of %s with %s runs the wrong way: %s", cl, subject, other, measured))
			}
		}
	}
	return out
}
