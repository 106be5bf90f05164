package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/record"
)

// seedNote says plainly what a seed fixes in explore, in the output as in
// docs/explore.md.
const seedNote = "the seed fixes the schedule of faults (which kind strikes what, when, for how long), not the interleavings the scheduler and the network choose: a replay is likely, not certain, to fail the same way"

func exploreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	implName := fs.String("impl", "", "implementation (see `bench list`)")
	topo := topologyFlag(fs)
	fencing := fencingFlag(fs)
	seed := seedFlag(fs, "seed of the fault schedule")
	duration := fs.Duration("duration", 2*time.Minute, "how long the workload runs")
	ttl := ttlFlag(fs, time.Second, "")
	clients := fs.Int("clients", 4, "client worker processes")
	kinds := fs.String("kinds", "", "comma-separated fault kinds (default: every kind that applies); kinds: "+strings.Join(nemesis.Names(), ", "))
	replays := fs.Int("replays", 3, "replays of each shrinking candidate (it still fails if any replay fails)")
	shrinkTime := fs.Duration("shrink-time", 5*time.Minute, "time limit for shrinking a counterexample")
	out := outFlag(fs, filepath.Join(os.TempDir(), "locklab", "explore"), "the minimal schedule, its history and timeline")
	dry := fs.Bool("print-schedule", false, "print the schedule the seed draws and exit without running it")
	fixed := fs.String("fixed", "", "run a fixed schedule in place of a random one: "+strings.Join(nemesis.FixedNames(), ", "))
	replayChecks := fs.Int("replay-checks", 1, "with -impl all: replays of each minimal schedule after shrinking, as bench check -schedule runs it")
	seeds := fs.Int("seeds", 1, "with -impl all (or a list): explore each lock with up to this many seeds (-seed, -seed+1, ...), stopping at the first that finds it unsafe (a seed that finds it stuck is kept while the next seeds look on)")
	sh := shardFlag(fs)
	without := fs.String("rerun-without", "", "with -impl all: comma-separated kinds; a lock whose minimal schedule uses only these is explored again without them (a second row)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *implName == "" {
		return fmt.Errorf("%w: explore needs -impl; implementations: %s", errUsage, strings.Join(impls.Names(), ", "))
	}
	if *implName == "all" || strings.Contains(*implName, ",") {
		if *fixed != "" || *dry {
			return fmt.Errorf("%w: -impl all (or a list) takes no -fixed or -print-schedule: it adds the fixed rows itself", errUsage)
		}
		if *duration <= 0 || *ttl <= 0 || *clients < 2 || *replays < 1 || *shrinkTime < 0 || *replayChecks < 1 || *seeds < 1 {
			return fmt.Errorf("%w: -duration and -ttl must be positive, -clients at least 2, -replays, -replay-checks and -seeds at least 1", errUsage)
		}
		if err := checkOutDir("out", *out); err != nil {
			return err
		}
		if *seed == 0 && !sh.Sharded() {
			*seed = time.Now().UnixNano()
		}
		return exploreTable(ctx, tableOptions{Impls: *implName, Topology: *topo, Fencing: *fencing, Seed: *seed, Seeds: *seeds, TTL: *ttl, Clients: *clients, Duration: *duration,
			Kinds: cluster.SplitList(*kinds), Replays: *replays, ShrinkBudget: *shrinkTime, ReplayChecks: *replayChecks,
			Without: cluster.SplitList(*without), Out: *out, Shard: *sh, Args: args}, stdout, stderr)
	}
	if *seeds != 1 {
		return fmt.Errorf("%w: -seeds explores each lock of -impl all (or a list); one lock's exploration is one -seed", errUsage)
	}
	if sh.Sharded() {
		return fmt.Errorf("%w: -shard splits the table of -impl all (or a list); one lock's exploration is one cell", errUsage)
	}
	spec, err := impls.Lookup(*implName)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *duration <= 0 || *ttl <= 0 || *clients < 2 || *replays < 1 || *shrinkTime < 0 {
		return fmt.Errorf("%w: -duration and -ttl must be positive, -clients at least 2, -replays at least 1", errUsage)
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	o := engine.ExploreOptions{Impl: spec, Topology: *topo, Fencing: *fencing, Seed: *seed, TTL: *ttl, Clients: *clients,
		Duration: *duration, Kinds: cluster.SplitList(*kinds), Fixed: *fixed, Replays: *replays, ShrinkBudget: *shrinkTime, OutDir: *out,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }}
	// Draw the schedule first: bad input (an unknown kind, a lock nothing
	// applies to) fails here, before any server starts.
	sched, skipped, err := engine.PlanExplore(o)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if !*dry {
		if err := checkOutDir("out", *out); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "impl: %s\nfencing: %v\nseed: %d\nnote: %s\n", spec.Name, *fencing, *seed, seedNote)
	for _, k := range sortedReasons(skipped) {
		fmt.Fprintf(stdout, "skipped kind %s: %s\n", k, skipped[k])
	}
	fmt.Fprintf(stdout, "schedule: %s over %v\n", faults(len(sched.Faults)), time.Duration(sched.Duration))
	if *dry {
		for _, st := range sched.Faults {
			fmt.Fprintln(stdout, stepLine(st))
		}
		return nil
	}
	x, err := engine.Explore(ctx, o)
	if err != nil {
		return err
	}
	d := x.Run.Decision
	fmt.Fprintf(stdout, "faults injected: %s\n", orNone(strings.Join(record.Tally(x.Run.Injected), ", ")))
	fmt.Fprintf(stdout, "critical sections checked: %d (%d with unknown outcome)\n", d.Sections, d.Unknown)
	printLiveness(stdout, d.Liveness)
	fmt.Fprintf(stdout, "minutes explored: %.1f\n", time.Duration(sched.Duration).Minutes())
	if d.Detail != "" {
		fmt.Fprintf(stdout, "detail: %s\n", d.Detail)
	}
	if x.Minimal != nil {
		fmt.Fprintf(stdout, "minimal schedule: %s over %v (from %d; %d candidates, %d kept, %v shrinking%s)\n",
			faults(len(x.Minimal.Faults)), time.Duration(x.Minimal.Duration), len(sched.Faults), x.Shrink.Candidates, x.Shrink.Accepted,
			x.Shrink.Elapsed.Round(time.Second), outOfTime(x.Shrink.OutOfTime))
		for _, st := range x.Minimal.Faults {
			fmt.Fprintln(stdout, stepLine(st))
		}
		fmt.Fprintf(stdout, "schedule file: %s\nhistory: %s\n", x.ScheduleFile, x.HistoryFile)
		if x.HTMLFile != "" {
			fmt.Fprintf(stdout, "counterexample: %s\n", x.HTMLFile)
		}
		fmt.Fprintf(stdout, "replay: go run ./cmd/bench check -schedule %s\n", x.ScheduleFile)
	}
	fmt.Fprintf(stdout, "elapsed: %v\nverdict: %s\n", x.Run.Elapsed.Round(time.Millisecond), d.Verdict)
	return nil
}

// checkSchedule replays a schedule file (bench check -schedule FILE).
func checkSchedule(ctx context.Context, path, out string, keep bool, stdout, stderr io.Writer) error {
	if out == "" {
		out = filepath.Join(os.TempDir(), "locklab", "explore")
	}
	if err := checkOutDir("out", out); err != nil {
		return err
	}
	s, err := nemesis.Load(path)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	fmt.Fprintf(stdout, "impl: %s\nfencing: %v\nseed: %d\nschedule: %s (%s over %v)\nnote: %s\n",
		s.Impl, s.Fencing, s.Seed, path, faults(len(s.Faults)), time.Duration(s.Duration), seedNote)
	r, err := engine.RunSchedule(ctx, s, func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) })
	if err != nil {
		return err
	}
	d := r.Decision
	fmt.Fprintf(stdout, "faults injected: %s\n", orNone(strings.Join(record.Tally(r.Injected), ", ")))
	fmt.Fprintf(stdout, "critical sections checked: %d (%d with unknown outcome)\n", d.Sections, d.Unknown)
	printLiveness(stdout, d.Liveness)
	if d.Detail != "" {
		fmt.Fprintf(stdout, "detail: %s\n", d.Detail)
	}
	if s.Verdict != "" {
		fmt.Fprintf(stdout, "recorded verdict: %s\n", s.Verdict)
	}
	if checker.Failed(d.Verdict) || keep {
		name := strings.TrimSuffix(filepath.Base(path), ".schedule.json")
		_, hist, html, err := engine.WriteCounterexample(filepath.Join(out, name+"-replay"), s, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "history: %s\n", hist)
		if html != "" {
			fmt.Fprintf(stdout, "counterexample: %s\n", html)
		}
	}
	fmt.Fprintf(stdout, "elapsed: %v\nverdict: %s\n", r.Elapsed.Round(time.Millisecond), d.Verdict)
	return nil
}

func printLiveness(w io.Writer, l checker.Liveness) {
	var worst time.Duration
	for _, h := range l.Heals {
		if h.Recovery > worst {
			worst = h.Recovery
		}
	}
	fmt.Fprintf(w, "grants after the first fault: %d; heals: %d; slowest grant after a heal: %v\n",
		l.GrantsAfterFault, len(l.Heals), worst.Round(time.Millisecond))
}

func sortedReasons(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func outOfTime(b bool) string {
	if b {
		return "; out of time: a smaller schedule may exist"
	}
	return ""
}

func stepLine(st nemesis.Step) string {
	at := fmt.Sprintf("at %v", time.Duration(st.At))
	if st.After != "" {
		at = "at failpoint " + st.After
	}
	return fmt.Sprintf("  %-28s %-20s %-10s for %v", at, st.Kind, st.Target, time.Duration(st.Duration))
}
