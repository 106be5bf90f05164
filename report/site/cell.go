package site

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// cellPageData is one cell's page: its runs, its progress, the fault
// schedule (declared and as recorded), porcupine's timeline of its
// counterexample, and the command that reproduces it.
type cellPageData struct {
	page
	Name        string
	Impl        string
	ImplHref    string
	Scenario    string
	Summary     string // the scenario's
	Fencing     bool
	V           verdictView
	Why         string
	Detail      string
	Runs        []runRow
	Exercised   int  // runs that exercised the fault (record.Cell.ExercisedRuns)
	Counted     bool // the cell's file counted them (Results.Counted)
	Sections    int
	MinSections int
	Unknown     int
	Grants      int
	MinGrants   int
	Minimum     checker.Minimum
	Recovery    string
	Figures     []string
	Steps       []Step // the fixed schedule the scenario runs; none for a scripted one
	Scripted    bool
	TTL         string
	Recorded    []faultRow // the faults of the counterexample's history
	Timeline    string
	History     string
	Reproduce   string
}

type runRow struct {
	N       int
	Seed    int64
	Verdict checker.Verdict
	Class   string
	Command string
}

type faultRow struct{ At, Duration, What string }

// reproduce is the check command that replays one run of a cell.
func reproduce(c record.Cell, ttl time.Duration, seed int64) string {
	cmd := fmt.Sprintf("go run ./cmd/bench check -impl %s -scenario %s", c.Impl, c.Scenario)
	if t := topology.Or(c.Topology); t != topology.SingleName {
		cmd = fmt.Sprintf("go run ./cmd/bench check -impl %s -topology %s -scenario %s", c.Impl, t, c.Scenario)
	}
	if c.Fencing {
		cmd += " -fencing"
	}
	if c.Profile != "" {
		cmd += " -profile " + c.Profile
		if d, err := time.ParseDuration(c.TTL); err == nil {
			// The cell ran with its profile's TTL, not the matrix's.
			ttl = d
		}
	}
	return fmt.Sprintf("%s -ttl %v -seed %d", cmd, ttl, seed)
}

func buildCell(r *Results, l links, p page, c record.Cell, o Options) (cellPageData, error) {
	ttl := o.MatrixTTL
	d := cellPageData{page: p, Name: cellName(c), Impl: c.Impl, ImplHref: l.page(p.Path, lockPage(c.Impl)),
		Scenario: c.Scenario, Fencing: c.Fencing, V: newVerdict(c.Verdict, c.Expected), Why: c.Why, Detail: c.Detail,
		Exercised: c.ExercisedRuns, Counted: r.Counted(c), Sections: c.Sections, MinSections: c.MinSections, Unknown: c.Unknown, Grants: c.GrantsAfterFault,
		MinGrants: c.MinGrantsAfterFault, Minimum: checker.DefaultMinimum, TTL: ttl.String()}
	for i, v := range c.RunVerdicts {
		row := runRow{N: i + 1, Verdict: v, Class: verdictClass(v)}
		if i < len(c.Seeds) {
			row.Seed = c.Seeds[i]
			row.Command = reproduce(c, ttl, row.Seed)
		}
		d.Runs = append(d.Runs, row)
	}
	// The run to reproduce is the one that made the cell what it is (its
	// counterexample, if any), as the checker names it.
	if i := checker.DecidingRun(c.Verdict, c.RunVerdicts); i >= 0 {
		d.Reproduce = d.Runs[i].Command
	}
	var rec []string
	for _, ms := range c.RecoveryMillis {
		rec = append(rec, fmt.Sprintf("%d ms", ms))
	}
	d.Recovery = strings.Join(rec, ", ")
	keys := make([]string, 0, len(c.Figures))
	for k := range c.Figures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "recovery-ms" {
			d.Figures = append(d.Figures, fmt.Sprintf("%s: %g", k, c.Figures[k]))
		}
	}
	if o.Describe != nil {
		if sc, ok := o.Describe(c, ttl); ok {
			d.Summary, d.Steps, d.Scripted = sc.Summary, sc.Steps, sc.Scripted
		}
	}
	if c.Counterexample != "" {
		d.Timeline = l.result(p.Path, c.Counterexample)
	}
	if c.History != "" {
		d.History = l.result(p.Path, c.History)
		faults, err := recordedFaults(filepath.Join(r.Dir, filepath.FromSlash(c.History)))
		if err != nil {
			return d, err
		}
		d.Recorded = faults
	}
	return d, nil
}

// recordedFaults lists the faults a history recorded, timed from its
// first event: what the run actually did, beside what was declared.
func recordedFaults(path string) ([]faultRow, error) {
	events, err := lin.ReadEventsFile(path)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	if len(events) == 0 {
		return nil, nil
	}
	start := events[0].Time
	for _, e := range events {
		start = min(start, e.Time)
	}
	var out []faultRow
	for _, e := range events {
		if e.Kind != lin.Fault {
			continue
		}
		row := faultRow{At: ms(e.Time - start), What: e.Text}
		if e.Injection != nil && e.Text == "" {
			row.What = e.Injection.String()
		}
		if e.End > e.Time {
			row.Duration = ms(e.End - e.Time)
		}
		out = append(out, row)
	}
	return out, nil
}

func ms(ns int64) string {
	return time.Duration(ns).Round(time.Millisecond).String()
}
