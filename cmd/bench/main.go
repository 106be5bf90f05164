// Command bench is the lab's command line: list what exists, check one
// implementation under one scenario, run the verdict matrix, and measure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/locklab/locklab/checker"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/impls/mutant"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// errUsage marks bad input: the command exits with status 2.
var errUsage = errors.New("usage")

// quietRedis drops go-redis's own log lines ("failed to dial" while a
// server restarts, which the lab does on purpose); every error that matters
// reaches the lab as a returned error and is reported there.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...interface{}) {}

func main() {
	redis.SetLogger(quietRedis{})
	// Fault scenarios re-execute this binary as client processes.
	runner.MaybeRunWorker()
	// Ctrl-C ends ctx first, so a run cut by it says "interrupted" rather
	// than fail on the servers the handler then stops; StopAll does not
	// return after a signal, and the handler exits with 128+signal.
	ctx := cluster.StopOnSignal()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cluster.StopAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

const usage = `usage: bench <command> [flags]

commands:
  list                      every implementation and every scenario, one per line
  check -impl NAME -scenario NAME [-fencing] [-seed N] [-clients N] [-sections N] [-ttl D] [-out DIR]
                            start fresh servers, run one scenario, print the verdict last
  check -schedule FILE [-out DIR]
                            replay a schedule file written by explore; print the verdict last
  explore -impl NAME [-duration 2m] [-seed N] [-ttl 1s] [-kinds a,b] [-fixed NAME] [-fencing] [-shrink-time 5m] [-out DIR]
                            contend for one key while a seeded nemesis injects random faults; on a
                            counterexample shrink it to a minimal replayable schedule file; -impl all
                            (or a,b) explores each lock in turn and writes the table -out/README.md
  matrix [-impl a,b] [-scenario x,y] [-runs N] [-ttl D] [-shard i/n -seed N] [-out results]
                            run every implementation under every scenario that applies, with and
                            without fencing; write results/correctness.md, correctness.json, counterexamples/
  mutants [-mutant a,b] [-first] [-list] [-shard i/n -seed N] [-out results]
                            break each of our correct locks in a known way (LOCKLAB_MUTANT) and run
                            its cells; write results/mutants.{md,json}; exit 1 if a mutant survives;
                            needs a bench built with -tags mutants (make mutants)
  merge [-out DIR] PATH...
                            put a sharded run back together: matrix, explore -impl all and mutants
                            take -shard i/n (needs -seed) and write a partial result to -out; merge
                            reads the partials (files, or directories of them), refuses a set that
                            is not every shard of one run (one command, commit and options), and
                            writes the results an unsharded run writes
  lessons [-page FILE,...] [-no-run]
                            rerun the lessons' scenarios and regenerate docs/lessons/ and README's table
  bench [-quick] [-impl a,b] [-workload w,x] [-out results]
                            measure every implementation and peer, write results/bench.{md,json} and charts
  recall [-results results]
                            measure explore's recall against the matrix: of the pairs (lock, topology)
                            the matrix proves unsafe unfenced, those explore found on its own; write
                            results/explore/recall.{md,json}
  report [-results results] [-out results/site] [-serve] [-port N]
                            render the results as a static site (open results/site/index.html);
                            -serve serves it on 127.0.0.1

servers: by default the lab starts its own as local processes; with LOCKLAB_SERVERS=containers
(or -servers containers on check and bench) as Docker containers built from docker/; to use
yours set LOCKLAB_REDIS_ADDRS, LOCKLAB_RESOURCE_ADDR, LOCKLAB_ZK_ADDRS, LOCKLAB_PG_DSN,
LOCKLAB_ETCD_ADDRS, LOCKLAB_MYSQL_DSN (or the matching flags).`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command given\n%s", errUsage, usage)
	}
	if _, err := cluster.ParseServers(os.Getenv(cluster.ServersEnv)); err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, cluster.ServersEnv, err)
	}
	switch args[0] {
	case "list":
		return list(stdout)
	case "check":
		return check(ctx, args[1:], stdout, stderr)
	case "bench":
		return benchCmd(ctx, args[1:], stdout, stderr)
	case "matrix":
		return matrix(ctx, args[1:], stdout, stderr)
	case "lessons":
		return lessonsCmd(ctx, args[1:], stdout, stderr)
	case "mutants":
		return mutantsCmd(ctx, args[1:], stdout, stderr)
	case "explore":
		return exploreCmd(ctx, args[1:], stdout, stderr)
	case "report":
		return reportCmd(ctx, args[1:], stdout, stderr)
	case "recall":
		return recallCmd(ctx, args[1:], stdout, stderr)
	case "merge":
		return mergeCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return fmt.Errorf("%w: unknown command %q\n%s", errUsage, args[0], usage)
	}
}

func list(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, s := range impls.All() {
		kind := "impl"
		switch {
		case s.Guest:
			kind = "guest" // another language's lock, behind the worker protocol
		case s.Peer:
			kind = "peer"
		}
		note := s.Summary
		if s.Broken != "" {
			note = "BROKEN (" + s.Broken + "): " + note
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", kind, s.Name, s.Caps, note)
	}
	for _, s := range scenarios.All() {
		fmt.Fprintf(tw, "scenario\t%s\t\t%s\n", s.Name, s.Summary)
	}
	for _, t := range topology.All() {
		var carried []string
		for _, s := range impls.All() {
			if t.Carries(s.Backend.Need()) {
				carried = append(carried, s.Name)
			}
		}
		fmt.Fprintf(tw, "topology\t%s\t\t%s; carries: %s\n", t.Name, t.Summary, strings.Join(carried, ", "))
	}
	return tw.Flush()
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// serverFlags adds the flags that point the lab at the user's own servers:
// -resource, and one per server kind a user can run (its OwnServers flag,
// defaulting to its environment variable).
func serverFlags(fs *flag.FlagSet) func() cluster.External {
	ext := cluster.ExternalFromEnv()
	resourceAddr := fs.String("resource", ext.Resource, "Redis holding the protected counter (default: start one)")
	own := map[topology.Kind]*string{}
	for _, k := range cluster.OwnKinds() {
		o := k.OwnServers()
		own[k.Kind()] = fs.String(o.Flag, strings.Join(ext.Lock.Addrs(k.Kind()), ","), o.Usage)
	}
	fs.Func("servers", "where the lab starts its servers: local (processes, the default) or containers (Docker engine); also LOCKLAB_SERVERS", func(s string) error {
		mode, err := cluster.ParseServers(s)
		if err != nil {
			return err
		}
		// The environment, so every server start in this run (and nothing else) sees it.
		return os.Setenv(cluster.ServersEnv, mode)
	})
	return func() cluster.External {
		containersOutDir(fs)
		e := cluster.External{Lock: topology.Endpoints{}, Resource: *resourceAddr}
		for kind, addrs := range own {
			e.Own(kind, cluster.SplitList(*addrs))
		}
		return e
	}
}

// containersOutDir keeps container-mode figures apart from local ones: an
// -out left at its default "results" becomes results/containers.
func containersOutDir(fs *flag.FlagSet) {
	out := fs.Lookup("out")
	if !cluster.ContainerMode() || out == nil || out.DefValue != "results" {
		return
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "out" })
	if !set {
		_ = out.Value.Set(filepath.Join("results", "containers"))
	}
}

// parse parses flags, turning every mistake into a usage error.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return nil
}

func check(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	implName := fs.String("impl", "", "implementation (see `bench list`)")
	scenarioName := fs.String("scenario", "", "scenario (see `bench list`)")
	topo := topologyFlag(fs)
	fencing := fencingFlag(fs)
	seed := seedFlag(fs, "seed: fixes the lock key and each client's random work and think times, not the order in which things happen")
	clients := fs.Int("clients", 8, "concurrent clients")
	sections := fs.Int("sections", 2000, "critical sections in total")
	ttl := ttlFlag(fs, 2*time.Second, "(under a profile other than fast: the profile's unless given)")
	profile := fs.String("profile", topology.FastName, "timeout profile: "+strings.Join(topology.ProfileNames(), ", "))
	out := outFlag(fs, "", "counterexample timelines (default: $TMPDIR/locklab)")
	keep := fs.Bool("history", false, "keep the recorded history (JSON lines) even when the run is safe")
	schedule := fs.String("schedule", "", "replay a schedule file written by `bench explore` (alone, or with -out)")
	external := serverFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *schedule != "" {
		if *implName != "" || *scenarioName != "" {
			return fmt.Errorf("%w: -schedule names its implementation and faults itself; drop -impl and -scenario", errUsage)
		}
		return checkSchedule(ctx, *schedule, *out, *keep, stdout, stderr)
	}
	if *implName == "" || *scenarioName == "" {
		return fmt.Errorf("%w: check needs -impl and -scenario; implementations: %s; scenarios: %s",
			errUsage, strings.Join(impls.Names(), ", "), strings.Join(scenarios.Names(), ", "))
	}
	spec, err := impls.Lookup(*implName)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if _, err := scenarios.Lookup(*scenarioName); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *clients < 1 || *sections < 1 || *ttl <= 0 {
		return fmt.Errorf("%w: -clients and -sections must be at least 1 and -ttl positive", errUsage)
	}
	prof, err := topology.LookupProfile(*profile)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if prof.Name != topology.FastName {
		// The fast profile keeps check's own default TTL; another runs
		// with its own unless -ttl was given.
		if *ttl, err = ttlFor(prof, *ttl, flagGiven(fs, "ttl")); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if err := checkOutDir("out", counterexampleDir(*out)); err != nil {
		return err
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	fmt.Fprintf(stdout, "impl: %s\ntopology: %s\nscenario: %s\nfencing: %v\nprofile: %s\nttl: %v\nseed: %d\n", spec.Name, *topo, *scenarioName, *fencing, prof.Name, *ttl, *seed)
	m, err := liveMutant()
	if err != nil {
		return err
	}
	if m != "" {
		// A verdict on a lock broken on purpose must never pass for the lock's own.
		fmt.Fprintf(stdout, "mutant: %s (%s is set: the lock is broken on purpose)\n", m, mutant.EnvVar)
	}
	o, err := engine.RunScenario(ctx, *scenarioName, engine.Options{
		Impl: spec, Topology: *topo, Profile: prof.Name, Fencing: *fencing, Seed: *seed, Clients: *clients, Sections: *sections, TTL: *ttl,
		OutDir: *out, KeepHistory: *keep, External: external(),
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) },
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "critical sections checked: %d (%d with unknown outcome)\n", o.Sections, o.Unknown)
	if o.Recovery > 0 {
		fmt.Fprintf(stdout, "recovery after crash: %v\n", o.Recovery.Round(time.Millisecond))
	}
	if o.Detail != "" {
		fmt.Fprintf(stdout, "detail: %s\n", o.Detail)
	}
	if o.ExerciseJudged {
		fmt.Fprintf(stdout, "exercised: %v\n", o.Exercised)
	}
	for _, x := range o.Exposures {
		fmt.Fprintf(stdout, "danger window of fault %d: %s\n", x.Fault+1, dangerLine(x))
	}
	fmt.Fprintf(stdout, "elapsed: %v\n", o.Elapsed.Round(time.Millisecond))
	if line := phaseLine([]*engine.Outcome{o}); line != "" {
		fmt.Fprintf(stdout, "phases (s): %s\n", strings.Trim(strings.TrimSpace(line), "[]"))
	}
	for _, k := range sortedKeys(o.Figures) {
		fmt.Fprintf(stdout, "%s: %g\n", k, o.Figures[k])
	}
	if o.History != "" {
		fmt.Fprintf(stdout, "history: %s\n", o.History)
	}
	if o.HTML != "" {
		fmt.Fprintf(stdout, "counterexample: %s\n", o.HTML)
	}
	fmt.Fprintf(stdout, "verdict: %s\n", o.Verdict)
	return nil
}

// dangerLine says one danger window for people: whose claim, from when to
// when after its grant, and how many acts of others fell inside it.
func dangerLine(x checker.Exposure) string {
	if x.Holder < 0 {
		return x.Rule
	}
	if !x.Opened {
		return fmt.Sprintf("never opened for client %d's claim (%s)", x.Holder, x.Rule)
	}
	ms := func(t int64) int64 { return time.Duration(t - x.Grant).Milliseconds() }
	return fmt.Sprintf("client %d's claim, %d to %d ms after its grant (%s); %d acts of other clients inside",
		x.Holder, ms(x.Start), ms(x.End), x.Rule, x.Others)
}
