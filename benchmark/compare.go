package benchmark

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/locklab/locklab/record"
	"golang.org/x/perf/benchmath"
)

// Comparing two runs as benchstat does: each figure's trials of the old
// run against the new run's, with the Mann-Whitney U test
// (benchmath.AssumeNothing); a change is reported only when p < alpha.
// Figures are compared run against run, so both runs should have been
// made on the same machine with the same settings: the comparison says so
// when they were not.

// FigureChange is one figure of one lock in two runs.
type FigureChange struct {
	Impl, Figure string
	Old, New     record.Stat
	Cmp          benchmath.Comparison
}

// Significant reports a change beyond the noise.
func (c FigureChange) Significant() bool { return c.Cmp.P <= c.Cmp.Alpha }

// figure is one comparable figure of a result.
type figure struct {
	name string
	get  func(*record.BenchResult) *record.Stat
}

var comparedFigures = []figure{
	{"uncontended pairs/s", func(r *record.BenchResult) *record.Stat {
		if r.Uncontended == nil {
			return nil
		}
		return &r.Uncontended.PairsPerSec
	}},
	{"uncontended acquire p50 ms", func(r *record.BenchResult) *record.Stat {
		if r.Uncontended == nil {
			return nil
		}
		return &r.Uncontended.AcquireP50
	}},
	{"contended pairs/s", func(r *record.BenchResult) *record.Stat {
		if r.Contended == nil {
			return nil
		}
		return &r.Contended.PairsPerSec
	}},
	{"contended wait p99 ms", func(r *record.BenchResult) *record.Stat {
		if r.Contended == nil {
			return nil
		}
		return &r.Contended.WaitP99
	}},
	{"hand-off p50 ms", func(r *record.BenchResult) *record.Stat {
		if r.Contended == nil {
			return nil
		}
		return &r.Contended.HandoffP50
	}},
	{"back to releaser", func(r *record.BenchResult) *record.Stat {
		if r.Contended == nil {
			return nil
		}
		return &r.Contended.SameClientShare
	}},
	{"cost per acquisition", func(r *record.BenchResult) *record.Stat {
		if r.Contended == nil {
			return nil
		}
		return r.Contended.CostPerAcquisition
	}},
	{"independent-keys pairs/s", func(r *record.BenchResult) *record.Stat {
		if r.Independent == nil {
			return nil
		}
		return &r.Independent.PairsPerSec
	}},
}

// ReadReport reads a bench.json.
func ReadReport(path string) (*record.Bench, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var rep record.Bench
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("decode report %s: %w", path, err)
	}
	if len(rep.Impls) == 0 {
		return nil, fmt.Errorf("report %s has no implementation (is it a bench.json?)", path)
	}
	return &rep, nil
}

// CompareReports compares every figure of every lock in both runs.
func CompareReports(old, cur *record.Bench) []FigureChange {
	oldBy := map[string]*record.BenchResult{}
	for i := range old.Impls {
		oldBy[old.Impls[i].Name] = &old.Impls[i]
	}
	var out []FigureChange
	for i := range cur.Impls {
		n := &cur.Impls[i]
		o := oldBy[n.Name]
		if o == nil {
			continue
		}
		for _, f := range comparedFigures {
			oldS, newS := f.get(o), f.get(n)
			if oldS == nil || newS == nil || len(oldS.Trials) == 0 || len(newS.Trials) == 0 {
				continue
			}
			th := &benchmath.DefaultThresholds
			cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(oldS.Trials, th), benchmath.NewSample(newS.Trials, th))
			out = append(out, FigureChange{Impl: n.Name, Figure: f.name, Old: NewStat(oldS.Trials), New: NewStat(newS.Trials), Cmp: cmp})
		}
	}
	return out
}

// WriteComparison prints what changed beyond the noise, then how much did
// not, and what could not be compared.
func WriteComparison(w io.Writer, oldPath string, old *record.Bench, newPath string, cur *record.Bench) error {
	changes := CompareReports(old, cur)
	fmt.Fprintf(w, "old: %s (%s, %d trials of %s)\nnew: %s (%s, %d trials of %s)\n", oldPath, old.Date, old.Settings.Trials,
		fmtDur(old.Settings.DurationMS), newPath, cur.Date, cur.Settings.Trials, fmtDur(cur.Settings.DurationMS))
	if old.Machine != cur.Machine {
		fmt.Fprintf(w, "note: the runs were made on different machines (%s, %d cores / %s, %d cores): differences may be the machine's\n",
			old.Machine.CPU, old.Machine.Cores, cur.Machine.CPU, cur.Machine.Cores)
	}
	if old.Settings.DurationMS != cur.Settings.DurationMS || old.Settings.Clients != cur.Settings.Clients || old.Settings.TTLMS != cur.Settings.TTLMS {
		fmt.Fprintln(w, "note: the runs used different settings (duration, clients or TTL)")
	}
	alpha := benchmath.DefaultThresholds.CompareAlpha
	fmt.Fprintf(w, "Mann-Whitney U test per figure (benchstat's method); changes with p <= %.2f:\n\n", alpha)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "implementation\tfigure\told\tnew\tdelta\tp\t")
	same, few := 0, 0
	for _, c := range changes {
		if !c.Significant() {
			same++
			if len(c.Cmp.Warnings) > 0 {
				few++
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Impl, c.Figure, fmtStat(c.Old), fmtStat(c.New),
			c.Cmp.FormatDelta(c.Old.Median, c.New.Median), c.Cmp.String())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d of %d figures changed beyond the noise; %d did not (~)", len(changes)-same, len(changes), same)
	if few > 0 {
		fmt.Fprintf(w, ", %d of them with too few trials to tell (%d needed per run at this alpha)", few, uTestMinTrials(alpha))
	}
	fmt.Fprintln(w, ".")
	var onlyOld, onlyNew []string
	has := func(rep *record.Bench, name string) bool {
		for _, r := range rep.Impls {
			if r.Name == name {
				return true
			}
		}
		return false
	}
	for _, r := range old.Impls {
		if !has(cur, r.Name) {
			onlyOld = append(onlyOld, r.Name)
		}
	}
	for _, r := range cur.Impls {
		if !has(old, r.Name) {
			onlyNew = append(onlyNew, r.Name)
		}
	}
	if len(onlyOld) > 0 {
		fmt.Fprintf(w, "only in the old run: %v\n", onlyOld)
	}
	if len(onlyNew) > 0 {
		fmt.Fprintf(w, "only in the new run: %v\n", onlyNew)
	}
	return nil
}

// uTestMinTrials is the fewest trials per run for which two fully
// separated samples reach p <= alpha (two-sided Mann-Whitney U with equal
// sizes: p = 2 / C(2n, n)).
func uTestMinTrials(alpha float64) int {
	for n := 1; n < 50; n++ {
		c := 1.0
		for k := 1; k <= n; k++ {
			c = c * float64(n+k) / float64(k)
		}
		if 2/c <= alpha {
			return n
		}
	}
	return 50
}
