package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report"
	"github.com/locklab/locklab/shard"
	"github.com/locklab/locklab/topology"
)

// fixedRows are the fixed schedules the table runs besides each lock's
// random exploration: a pg-advisory holder and a ZooKeeper holder cut off
// their server by dropped packets, which no random draw is sure to hit and
// the lessons' claims about both locks rest on.
var fixedRows = map[string][]string{
	"pg-advisory": {"holder-partition"},
	"zookeeper":   {"holder-partition"},
}

// tableOptions configure `bench explore -impl all`.
type tableOptions struct {
	Impls    string // "all" or a comma-separated list
	Topology string // the servers' topology (topology.Named)
	Fencing  bool   // the resource refuses stale tokens; locks without them are skipped
	Seed     int64
	// Seeds is how many seeds each lock is explored with at most (Seed,
	// Seed+1, ...), stopping at the first that finds it unsafe: one draw of a
	// random schedule misses windows a fixed scenario forces, and more
	// draws are how explore finds on its own what the matrix finds.
	Seeds        int
	TTL          time.Duration
	Clients      int
	Duration     time.Duration
	Kinds        []string
	Replays      int
	ShrinkBudget time.Duration
	ReplayChecks int
	Without      []string
	Out          string
	// Shard, when set, runs only the locks whose names hash to it and
	// writes a partial result into Out; Args is the command line, which
	// the partial names.
	Shard shard.Shard
	Args  []string
}

// exploreOptions are what decide an explore table's rows and verdicts:
// the shards of one table agree on all of them.
type exploreOptions struct {
	Impls string `json:"impls"`
	// Topology: shards of different topologies are different tables.
	Topology     string   `json:"topology,omitempty"`
	Fencing      bool     `json:"fencing,omitempty"`
	Seed         int64    `json:"seed"`
	Seeds        int      `json:"seeds,omitempty"`
	TTL          string   `json:"ttl"`
	Clients      int      `json:"clients"`
	Duration     string   `json:"duration"`
	Kinds        []string `json:"kinds"`
	Replays      int      `json:"replays"`
	ShrinkBudget string   `json:"shrink_time"`
	ReplayChecks int      `json:"replay_checks"`
	Without      []string `json:"rerun_without"`
	Servers      string   `json:"servers"`
	// Hosts: whether the lab's own hosts were available (see hostsAvailable).
	Hosts bool `json:"hosts"`
}

func (o tableOptions) record() exploreOptions {
	return exploreOptions{Impls: o.Impls, Topology: o.Topology, Fencing: o.Fencing, Seed: o.Seed, Seeds: o.Seeds, TTL: o.TTL.String(), Clients: o.Clients, Duration: o.Duration.String(),
		Kinds: o.Kinds, Replays: o.Replays, ShrinkBudget: o.ShrinkBudget.String(), ReplayChecks: o.ReplayChecks,
		Without: o.Without, Servers: serversMode(), Hosts: hostsAvailable()}
}

// tableOptions reads back the options a shard recorded.
func (r exploreOptions) tableOptions(out string) (tableOptions, error) {
	o := tableOptions{Impls: r.Impls, Topology: r.Topology, Fencing: r.Fencing, Seed: r.Seed, Seeds: r.Seeds, Clients: r.Clients, Kinds: r.Kinds, Replays: r.Replays,
		ReplayChecks: r.ReplayChecks, Without: r.Without, Out: out}
	for _, d := range []struct {
		s   string
		dst *time.Duration
	}{{r.TTL, &o.TTL}, {r.Duration, &o.Duration}, {r.ShrinkBudget, &o.ShrinkBudget}} {
		v, err := time.ParseDuration(d.s)
		if err != nil {
			return o, fmt.Errorf("explore options: %w", err)
		}
		*d.dst = v
	}
	return o, nil
}

// exploreRow is one row of explore.json (record.ExploreRow, where the
// report site reads it too).
type exploreRow = record.ExploreRow

// exploreTable explores each lock in turn (and the fixed rows), then
// writes README.md and explore.json with every counterexample the table
// links. Everything is written to a scratch directory first and copied to
// out only when every row is done: an interrupted or failed run leaves no
// partial result in out.
func exploreTable(ctx context.Context, o tableOptions, stdout, stderr io.Writer) error {
	var specs []impls.Spec
	named, err := topology.Lookup(o.Topology)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.Impls == "all" {
		// Every lock the topology carries (the single one carries all).
		for _, s := range impls.All() {
			if named.Carries(s.Backend.Need()) {
				specs = append(specs, s)
			}
		}
	} else {
		for _, name := range cluster.SplitList(o.Impls) {
			spec, err := impls.Lookup(name)
			if err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			specs = append(specs, spec)
		}
	}
	for _, k := range append(append([]string(nil), o.Kinds...), o.Without...) {
		if _, err := nemesis.Lookup(k); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	var partial *shard.Partial
	if o.Shard.Sharded() {
		var err error
		if partial, err = newPartial("explore", o.Shard, o.Seed, o.Args, o.record(), len(specs)); err != nil {
			return err
		}
	}
	// The scratch dir is the lab's (package leftovers): a run ended by a
	// signal or a failure removes it, a SIGKILLed one's goes at the next
	// run's start.
	scratch, err := leftovers.MakeDir("explore-table")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	logf := func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
	started := time.Now()
	var rows []exploreRow
	for pos, spec := range specs {
		if !o.Shard.Owns(spec.Name) {
			continue
		}
		firstRow := len(rows)
		base := engine.ExploreOptions{Impl: spec, Topology: o.Topology, Fencing: o.Fencing, Seed: o.Seed, TTL: o.TTL, Clients: o.Clients, Duration: o.Duration,
			Kinds: o.Kinds, Replays: o.Replays, ShrinkBudget: o.ShrinkBudget, OutDir: scratch, Logf: logf}
		runs := []engine.ExploreOptions{base}
		for _, f := range fixedRows[spec.Name] {
			fo := base
			fo.Fixed = f
			runs = append(runs, fo)
		}
		for _, eo := range runs {
			row, err := exploreSeeds(ctx, eo, o.Seeds, o.ReplayChecks, scratch, stdout)
			if err != nil {
				return fmt.Errorf("explore %s: %w", spec.Name, err)
			}
			rows = append(rows, row)
			// A lock broken at once by one kind says little else: explore
			// it again without that kind.
			if eo.Fixed == "" && row.MinimalFaults > 0 && onlyKinds(scratch, row.Schedule, o.Without) {
				wo := eo
				wo.Kinds = withoutKinds(spec, o.Topology, o.Clients, o.Kinds, o.Without)
				if len(wo.Kinds) == 0 {
					continue
				}
				// Its own directory first: explore names files by lock
				// and seed, which would overwrite the first row's.
				wo.OutDir = filepath.Join(scratch, "without")
				row, err := exploreSeeds(ctx, wo, o.Seeds, o.ReplayChecks, wo.OutDir, stdout)
				if err != nil {
					return fmt.Errorf("explore %s without %v: %w", spec.Name, o.Without, err)
				}
				row.Without = o.Without
				stem := strings.TrimSuffix(row.Schedule, ".schedule.json")
				for _, f := range row.Files() {
					name := stem + "-without-" + strings.Join(o.Without, "-") + strings.TrimPrefix(*f, stem)
					if err := os.Rename(filepath.Join(wo.OutDir, *f), filepath.Join(scratch, name)); err != nil {
						return err
					}
					*f = name
				}
				rows = append(rows, row)
			}
		}
		if partial != nil {
			// A lock's rows are one cell: its random row, its fixed rows
			// and its row without some kinds.
			if err := addCell(partial, spec.Name, pos, rows[firstRow:]); err != nil {
				return err
			}
		}
	}
	if partial != nil {
		if err := addFiles(partial, scratch, "", tableFiles); err != nil {
			return err
		}
		return writePartial(partial, o.Out, started, stdout)
	}
	if err := writeExploreTable(scratch, o, rows, commitNamed(), time.Since(started)); err != nil {
		return err
	}
	// The new table replaces the old one's files, and a counterexample of
	// an earlier table (a lock that no longer failed, a row no longer
	// explored) goes with it rather than linger as if it belonged.
	if _, err := report.Publish(scratch, o.Out, tableFiles); err != nil {
		return fmt.Errorf("write %s: %w", o.Out, err)
	}
	fmt.Fprintf(stdout, "table: %s\n", filepath.Join(o.Out, "README.md"))
	return nil
}

// mergeExplore writes the table the shards of run make, as `bench
// explore -impl all` would have written it unsharded.
func mergeExplore(run shard.Run, stage, out string, stdout io.Writer) error {
	var r exploreOptions
	if err := json.Unmarshal(run.Options, &r); err != nil {
		return fmt.Errorf("explore options: %w", err)
	}
	o, err := r.tableOptions(out)
	if err != nil {
		return err
	}
	var rows []exploreRow
	for _, c := range run.Cells {
		var lock []exploreRow
		if err := json.Unmarshal(c.Result, &lock); err != nil {
			return fmt.Errorf("lock %s: %w", c.Key, err)
		}
		rows = append(rows, lock...)
	}
	if err := writeFiles(stage, run.Files); err != nil {
		return err
	}
	if err := writeExploreTable(stage, o, rows, run.Commit, time.Duration(run.Seconds*float64(time.Second))); err != nil {
		return err
	}
	if _, err := report.Publish(stage, out, tableFiles); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(stdout, "table: %s\n", filepath.Join(out, "README.md"))
	return nil
}

// exploreOne explores one lock (or runs one fixed schedule) and replays
// its minimal counterexample, if any, checks times more.
func exploreOne(ctx context.Context, eo engine.ExploreOptions, checks int, dir string, stdout io.Writer) (exploreRow, error) {
	row := exploreRow{Impl: eo.Impl.Name, Fenced: eo.Fencing, Topology: topology.Or(eo.Topology), Broken: eo.Impl.Broken != "", Fixed: eo.Fixed}
	x, err := engine.Explore(ctx, eo)
	// Explore plans before it starts anything, so a lock it cannot explore
	// is refused at once, and with -impl all that is a row, not the end.
	if err != nil && (eo.Impl.Backend.InProcess || errors.Is(err, engine.ErrNoKind) || errors.Is(err, engine.ErrNoFencing)) {
		row.Skipped = err.Error()
		fmt.Fprintf(stdout, "%s: skipped: %s\n", row.Impl, row.Skipped)
		return row, nil
	}
	if err != nil {
		return row, err
	}
	d := x.Run.Decision
	row.Minutes = time.Duration(x.Schedule.Duration).Minutes()
	row.Faults = len(x.Schedule.Faults)
	row.Injected = x.Run.Injected
	row.Sections, row.Unknown = d.Sections, d.Unknown
	row.Verdict, row.Detail = d.Verdict, d.Detail
	row.FaultsJudged, row.FaultsExercised = d.Exercise.Faults, d.Exercise.FaultsExercised
	row.NotStruck = len(x.Run.NotStruck)
	if x.Minimal != nil {
		row.MinimalFaults = len(x.Minimal.Faults)
		row.MinimalDuration = time.Duration(x.Minimal.Duration).String()
		row.ShrinkOutOfTime = x.Shrink.OutOfTime
		row.Schedule, row.History, row.Timeline = rel(dir, x.ScheduleFile), rel(dir, x.HistoryFile), rel(dir, x.HTMLFile)
		// The committed schedule replayed as `bench check -schedule` does:
		// a counterexample that does not replay is shown as such.
		s, err := nemesis.Load(x.ScheduleFile)
		if err != nil {
			return row, err
		}
		for i := 0; i < checks; i++ {
			r, err := engine.RunSchedule(ctx, s, nil)
			if err != nil {
				return row, fmt.Errorf("replay %s: %w", x.ScheduleFile, err)
			}
			row.Replays = append(row.Replays, r.Decision.Verdict)
			if checker.Reproduced(row.Verdict, r.Decision.Verdict) {
				continue
			}
			// Kept beside the counterexample's own: where the replay's
			// fault landed, and what the clients did around it.
			hist := fmt.Sprintf("%s.replay-%d%s", strings.TrimSuffix(x.ScheduleFile, ".schedule.json"), i+1, engine.HistorySuffix)
			if err := lin.WriteEvents(hist, r.Events); err != nil {
				return row, fmt.Errorf("replay %s: %w", x.ScheduleFile, err)
			}
			row.ReplayHistories = append(row.ReplayHistories, rel(dir, hist))
		}
	}
	minimal := ""
	if row.Schedule != "" {
		minimal = fmt.Sprintf("; minimal %s; replays %v", faults(row.MinimalFaults), row.Replays)
	}
	fmt.Fprintf(stdout, "%s%s: %s; %d sections; injected %s; %d of %d faults exercised%s\n", row.Impl, suffix(row),
		row.Verdict, row.Sections, orNone(strings.Join(record.Tally(row.Injected), ", ")), row.FaultsExercised, row.FaultsJudged, minimal)
	return row, nil
}

// exploreSeeds explores one lock with up to n seeds from eo.Seed on,
// stopping at the first that finds it unsafe, and returns that run's row
// (else the first stuck one's, else the last's) with the minutes, faults
// and sections of every seed tried added up.
func exploreSeeds(ctx context.Context, eo engine.ExploreOptions, n, checks int, dir string, stdout io.Writer) (exploreRow, error) {
	if n < 1 || eo.Fixed != "" {
		n = 1 // a fixed schedule draws nothing from its seed
	}
	return pickSeed(eo, n, dir, func(eo engine.ExploreOptions) (exploreRow, error) {
		return exploreOne(ctx, eo, checks, dir, stdout)
	})
}

// pickSeed runs explore for up to n seeds through one and picks the row,
// as exploreSeeds says; a row it drops has its files removed from dir.
func pickSeed(eo engine.ExploreOptions, n int, dir string, one func(engine.ExploreOptions) (exploreRow, error)) (exploreRow, error) {
	var sum exploreRow
	// stuck is the first seed's row that found the lock stuck: a liveness
	// failure, after which the next seeds go on looking for two holders
	// at once (what the matrix's unsafe cells show, and what explore's
	// recall is held to), the row falling back to it if none finds them.
	var stuck *exploreRow
	var stuckSeeds []int64
	for i := 0; i < n; i++ {
		seed := eo
		seed.Seed = eo.Seed + int64(i)
		row, err := one(seed)
		if err != nil || row.Skipped != "" {
			return row, err
		}
		last := i == n-1
		sum.Seeds = append(sum.Seeds, seed.Seed)
		sum.Minutes += row.Minutes
		sum.Faults += row.Faults
		sum.Sections += row.Sections
		sum.Unknown += row.Unknown
		sum.FaultsJudged += row.FaultsJudged
		sum.FaultsExercised += row.FaultsExercised
		sum.NotStruck += row.NotStruck
		for k, v := range row.Injected {
			if sum.Injected == nil {
				sum.Injected = map[string]int{}
			}
			sum.Injected[k] += v
		}
		if checker.LivenessViolated(row.Verdict) {
			stuckSeeds = append(stuckSeeds, seed.Seed)
			if stuck == nil {
				first := row
				stuck = &first
			} else if err := removeRowFiles(dir, &row); err != nil {
				return row, err
			}
			if !last {
				continue
			}
		}
		if !checker.Failed(row.Verdict) && !last {
			continue
		}
		if stuck != nil {
			if checker.SafetyViolated(row.Verdict) {
				if err := removeRowFiles(dir, stuck); err != nil {
					return row, err
				}
				row.StuckSeeds = stuckSeeds
			} else {
				row = *stuck
			}
		}
		row.Seeds, row.Minutes, row.Faults, row.Sections, row.Unknown = sum.Seeds, sum.Minutes, sum.Faults, sum.Sections, sum.Unknown
		row.FaultsJudged, row.FaultsExercised, row.Injected = sum.FaultsJudged, sum.FaultsExercised, sum.Injected
		row.NotStruck = sum.NotStruck
		return row, nil
	}
	return sum, nil
}

// removeRowFiles removes a row's counterexample files from dir, for a
// stuck seed's row that a later seed's replaced.
func removeRowFiles(dir string, row *exploreRow) error {
	for _, f := range row.Files() {
		if err := os.Remove(filepath.Join(dir, *f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", *f, err)
		}
	}
	return nil
}

// onlyKinds reports whether the schedule file (relative to dir) uses only
// the given kinds.
func onlyKinds(dir, file string, kinds []string) bool {
	if len(kinds) == 0 || file == "" {
		return false
	}
	s, err := nemesis.Load(filepath.Join(dir, file))
	if err != nil || len(s.Faults) == 0 {
		return false
	}
	for _, st := range s.Faults {
		if !slices.Contains(kinds, st.Kind) {
			return false
		}
	}
	return true
}

// withoutKinds is the kinds that apply to spec (of those asked for), less
// the excluded ones.
func withoutKinds(spec impls.Spec, topo string, clients int, asked, excluded []string) []string {
	t, err := nemesis.ExploreTopology(spec, topo, clients, asked)
	if err != nil {
		return nil
	}
	ks, _, err := nemesis.Applicable(spec, t, asked)
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range ks {
		if !slices.Contains(excluded, k.Name()) {
			out = append(out, k.Name())
		}
	}
	return out
}

func suffix(r exploreRow) string {
	s := ""
	if r.Fixed != "" {
		s += " (fixed " + r.Fixed + ")"
	}
	if len(r.Without) > 0 {
		s += " (without " + strings.Join(r.Without, ", ") + ")"
	}
	return s
}

func rel(dir, path string) string {
	if path == "" {
		return ""
	}
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}

// writeExploreTable writes README.md and explore.json into dir.
func writeExploreTable(dir string, o tableOptions, rows []exploreRow, commit string, elapsed time.Duration) error {
	data, err := json.MarshalIndent(record.ExploreTable{Seed: o.Seed, TTL: o.TTL.String(), Clients: o.Clients,
		Duration: o.Duration.String(), Note: seedNote, Rows: rows}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "explore.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Explore: every lock under random faults\n\n")
	fmt.Fprintf(&b, "Generated by `go run ./cmd/bench explore -impl %s -duration %v -seed %d -ttl %v -clients %d -replays %d -shrink-time %v -replay-checks %d",
		o.Impls, o.Duration, o.Seed, o.TTL, o.Clients, o.Replays, o.ShrinkBudget, o.ReplayChecks)
	if o.Topology != "" {
		fmt.Fprintf(&b, " -topology %s", o.Topology)
	}
	if o.Fencing {
		b.WriteString(" -fencing")
	}
	if o.Seeds > 1 {
		fmt.Fprintf(&b, " -seeds %d", o.Seeds)
	}
	if len(o.Kinds) > 0 {
		fmt.Fprintf(&b, " -kinds %s", strings.Join(o.Kinds, ","))
	}
	if len(o.Without) > 0 {
		fmt.Fprintf(&b, " -rerun-without %s", strings.Join(o.Without, ","))
	}
	fmt.Fprintf(&b, " -out %s` at commit %s in %v; do not edit by hand.\n\n", o.Out, commit, elapsed.Round(time.Second))
	fmt.Fprintf(&b, "Note: %s.\n\n", seedNote)
	fenced := "unfenced"
	if o.Fencing {
		fenced = "fenced (the resource refuses stale tokens; a lock that issues none is skipped)"
	}
	b.WriteString("Each row is the random exploration of the " + fenced + " lock (or a fixed schedule, named), healed between faults, " +
		"with up to the seeds the command names, stopping at the first that finds it unsafe (*seeds*: how many it took); a seed that finds it " +
		"stuck is kept and the next seeds go on looking for two holders at once, the row falling back to that stuck seed if none finds them. " +
		"*Faults exercised*: of the injected faults whose kinds declare when they put a lock at risk, how many had another client " +
		"come for the lock inside their danger window; a safe row whose faults were not exercised tested little. " +
		"Verdict: porcupine's (unsafe) or liveness (stuck: no grant within the bound after a heal). " +
		"On a counterexample the schedule was shrunk to the minimal one that still failed; *replayed* is the verdict of running that " +
		"committed schedule again as `bench check -schedule FILE` does, once per column entry: a counterexample that did not replay says so.\n\n")
	table := report.NewTable("lock", "schedule", "seeds", "minutes explored", "faults injected", "faults exercised", "sections (unknown)", "verdict", "minimal schedule", "replayed", "files")
	for _, r := range rows {
		name := r.Impl
		if r.Broken {
			name += " (BROKEN)"
		}
		sched := "random"
		if r.Fixed != "" {
			sched = "fixed " + r.Fixed
		}
		if len(r.Without) > 0 {
			sched += ", without " + strings.Join(r.Without, ", ")
		}
		if r.Skipped != "" {
			table.Row(name, "-", "-", "-", "-", "-", "-", "skipped: "+r.Skipped, "-", "-", "-")
			continue
		}
		minimal, replayed, files := "-", "-", "-"
		if r.Schedule != "" {
			minimal = fmt.Sprintf("%s over %s", faults(r.MinimalFaults), r.MinimalDuration)
			if r.ShrinkOutOfTime {
				minimal += " (shrinking ran out of time)"
			}
			replayed = joinVerdicts(r.Replays)
			if !checker.Reproduced(r.Verdict, r.Replays...) {
				replayed += " (did NOT replay)"
			}
			files = fmt.Sprintf("[schedule](%s), [history](%s)", r.Schedule, r.History)
			if r.Timeline != "" {
				files += fmt.Sprintf(", [timeline](%s)", r.Timeline)
			}
			for i, h := range r.ReplayHistories {
				files += fmt.Sprintf(", [replay %d's history](%s)", i+1, h)
			}
		}
		verdict := string(r.Verdict)
		if r.Detail != "" {
			verdict += ": " + r.Detail
		}
		if s := r.StuckFirst(); s != "" {
			verdict += " (" + s + ")"
		}
		injected := orNone(strings.Join(record.Tally(r.Injected), ", "))
		if s := r.NotStruckNote(); s != "" {
			injected += "; " + s
		}
		table.Row(name, sched, fmt.Sprint(max(len(r.Seeds), 1)), fmt.Sprintf("%.1f", r.Minutes), injected,
			fmt.Sprintf("%d of %d", r.FaultsExercised, r.FaultsJudged), fmt.Sprintf("%d (%d)", r.Sections, r.Unknown), verdict, minimal, replayed, files)
	}
	b.WriteString(table.String())
	return os.WriteFile(filepath.Join(dir, "README.md"), []byte(b.String()), 0o644)
}

// joinVerdicts lists verdicts as "unsafe, safe".
func joinVerdicts(vs []checker.Verdict) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// tableFiles are the names of the files a table run writes: its table and
// every counterexample's schedule, history and timeline. A plain history
// (written before histories were gzipped) is the table's too, so the next
// table removes it.
var tableFiles = []string{"README.md", "explore.json", "*.schedule.json", "*.history.jsonl", "*.history.jsonl.gz", "*.html"}

// faults counts faults in words: "1 fault", "3 faults".
func faults(n int) string {
	if n == 1 {
		return "1 fault"
	}
	return fmt.Sprintf("%d faults", n)
}
