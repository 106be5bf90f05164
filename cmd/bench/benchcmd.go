package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// benchCmd measures every implementation and peer (or the chosen subset)
// and writes the report into -out. Names are checked before any server
// starts, and nothing is written unless every measurement succeeded.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "a first look in about a minute: short measurements, reduced sweep, no recovery")
	implList := fs.String("impl", "", "comma-separated implementations (default: every one but the `none` control that -topology carries)")
	topo := topologyFlag(fs)
	workloadList := fs.String("workload", "", "comma-separated workloads (default: all): "+strings.Join(benchmark.Workloads, ", "))
	duration := fs.Duration("duration", 0, "length of each measurement (default 500ms, -quick 100ms)")
	clients := fs.Int("clients", 0, "clients of the contended and independent-keys workloads (default 8)")
	ttl := ttlFlag(fs, 0, "(default 2s)")
	slicesN := fs.Int("slices", 0, "turns each uncontended and contended window is cut into, a backend's locks taking theirs in between, so that a slow moment of the machine lands on them alike (default 5, -quick 2)")
	trials := fs.Int("trials", 0, "trials per figure; the report shows their median and its 95% confidence interval, which needs at least 6 (default 12, -quick 6)")
	out := outFlag(fs, "results", "bench.md, bench.json and the charts")
	verdicts := fs.String("verdicts", "", "the verdict matrix placing each lock on the decision chart (default: OUT/correctness.json; a missing file leaves the chart out)")
	compare := fs.String("compare", "", "compare OLD.json with -with (default OUT/bench.json) and print what changed beyond the noise; runs nothing")
	with := fs.String("with", "", "with -compare: the newer bench.json")
	render := fs.Bool("render", false, "write OUT/bench.md again from OUT/bench.json (after a change to the report's text); measures nothing, keeps the charts")
	splitCPUs := fs.Bool("split-cpus", false, "run the servers on one CPU and the clients on the others (default: they share every CPU)")
	external := serverFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *compare != "" {
		return compareCmd(*compare, *with, *out, stdout)
	}
	if *render {
		return renderCmd(*out, stdout)
	}
	if *with != "" {
		return fmt.Errorf("%w: -with needs -compare", errUsage)
	}
	opts := benchmark.Defaults(*quick)
	specs, err := benchmark.ParseImpls(*implList)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	opts.Topology = *topo
	if *implList == "" && *topo != topology.SingleName {
		// The default set is every lock the chosen topology can carry.
		named, _ := topology.Lookup(*topo)
		specs = slices.DeleteFunc(specs, func(s impls.Spec) bool { return !named.Carries(s.Backend.Need()) })
	}
	opts.Impls = specs
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["topology"] {
		// The default run measures on the single topology what it carries
		// (a lock that waits for replicas has none there), and every lock
		// on each other topology that carries it below, in one report.
		single, _ := topology.Lookup(topology.SingleName)
		opts.Impls = slices.DeleteFunc(slices.Clone(specs), func(s impls.Spec) bool {
			return s.Backend.Kind != "" && !single.Carries(s.Backend.Need())
		})
	}
	if opts.Workloads, err = benchmark.ParseWorkloads(*workloadList, opts.Workloads); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if set["duration"] {
		opts.Duration = *duration
	}
	if set["clients"] {
		opts.Clients = *clients
	}
	if set["ttl"] {
		opts.TTL = *ttl
	}
	if set["trials"] {
		opts.Trials = *trials
	}
	if set["slices"] {
		opts.Slices = *slicesN
	}
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// Container mode later moves a default -out into its containers/
	// subdir, which a writable -out can hold.
	if err := checkOutDir("out", *out); err != nil {
		return err
	}
	verdictPath := *verdicts
	if verdictPath == "" {
		verdictPath = filepath.Join(*out, "correctness.json")
	} else if _, err := os.Stat(verdictPath); err != nil {
		return fmt.Errorf("%w: -verdicts: %v", errUsage, err)
	}
	if opts.Survival, err = benchmark.LoadSurvival(verdictPath); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	opts.External = external()
	opts.SplitCPUs = *splitCPUs
	opts.Command = strings.TrimSpace("go run ./cmd/bench bench " + strings.Join(args, " "))
	opts.Progress = stderr
	opts.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }

	start := time.Now()
	rep, err := benchmark.Run(ctx, opts)
	if err != nil {
		return err
	}
	if !set["topology"] && !opts.External.Any() {
		if err := measureOthers(ctx, rep, opts, specs, set["trials"]); err != nil {
			return err
		}
	}
	files, err := benchmark.Write(rep, *out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	fmt.Fprintf(stdout, "measured %d implementations in %v\n", len(rep.Impls), time.Since(start).Round(time.Second))
	return nil
}

// measureOthers measures, into rep, the locks on every other topology
// that carries them: the correct locks and the peers (a broken lock's speed
// is shown once, on the single topology), uncontended and contended (the
// figures a choice between topologies turns on), with half the trials (at
// least 6, the fewest with an interval) unless -trials set them; a
// topology a request takes the same path on as on another is left out,
// and the report says so.
func measureOthers(ctx context.Context, rep *record.Bench, opts benchmark.Options, specs []impls.Spec, trialsSet bool) error {
	others := &record.OtherTopologies{Trials: opts.Trials, Locks: "the correct locks and the peers"}
	if !trialsSet {
		others.Trials = benchmark.HalfTrials(opts.Trials)
	}
	for _, w := range []string{benchmark.Uncontended, benchmark.Contended} {
		if slices.Contains(opts.Workloads, w) {
			others.Workloads = append(others.Workloads, w)
		}
	}
	if len(others.Workloads) == 0 {
		return nil
	}
	for _, t := range topology.All() {
		if t.Name == topology.SingleName {
			continue
		}
		if t.SameRequestsAs != "" {
			others.LeftOut = append(others.LeftOut, record.LeftOutTopology{Topology: t.Name, SameRequestsAs: t.SameRequestsAs})
			continue
		}
		o := opts
		o.Topology, o.Impls, o.Trials, o.Workloads = t.Name, nil, others.Trials, others.Workloads
		cannot := ""
		for _, s := range specs {
			if s.Broken != "" || !t.Carries(s.Backend.Need()) {
				continue
			}
			// A topology whose servers cannot start here (container mode
			// starts no Sentinel) is left out saying why, not a failed run.
			if decl, err := s.Backend.On(t); err == nil {
				if err := cluster.Ensembles(decl); err != nil {
					cannot = err.Error()
					continue
				}
			}
			o.Impls = append(o.Impls, s)
		}
		if len(o.Impls) == 0 {
			if cannot != "" {
				others.LeftOut = append(others.LeftOut, record.LeftOutTopology{Topology: t.Name, CannotStart: cannot})
			}
			continue
		}
		more, err := benchmark.Run(ctx, o)
		if err != nil {
			return fmt.Errorf("on %s: %w", t.Name, err)
		}
		rep.Append(more, t.Name)
	}
	rep.Others = others
	return nil
}

// renderCmd writes bench.md again from the bench.json beside it.
func renderCmd(out string, stdout io.Writer) error {
	path := filepath.Join(out, "bench.json")
	rep, err := benchmark.ReadReport(path)
	if err != nil {
		return fmt.Errorf("%w: -render: %v", errUsage, err)
	}
	files, err := benchmark.WriteMarkdownOnly(rep, out)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s from %s\n", f, path)
	}
	return nil
}

// compareCmd compares two bench.json files as benchstat would and prints
// the figures that changed beyond the noise. A difference is a finding, not
// a failure: it exits 0; an unreadable file is an error.
func compareCmd(oldPath, newPath, out string, stdout io.Writer) error {
	if newPath == "" {
		newPath = filepath.Join(out, "bench.json")
	}
	old, err := benchmark.ReadReport(oldPath)
	if err != nil {
		return fmt.Errorf("%w: -compare: %v", errUsage, err)
	}
	cur, err := benchmark.ReadReport(newPath)
	if err != nil {
		return fmt.Errorf("%w: -with: %v", errUsage, err)
	}
	return benchmark.WriteComparison(stdout, oldPath, old, newPath, cur)
}
