package benchmark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	// The recovery workload runs the holder-crash scenario, whose clients
	// are this test binary re-executed as workers: without this dispatch a
	// worker would run the tests again instead of being a client.
	runner.MaybeRunWorker()
	// Stops every server; a lab dir left behind fails the binary.
	os.Exit(cluster.EndOfTests(m.Run()))
}

// A tiny run of two locks (the in-process reference and the Redis lock)
// must produce a complete, well-formed report: every implementation in
// every table, every figure a finite number, charts that parse, and a
// bench.json that decodes. Timings are not asserted: benchmarks are not tests.
// minSamplesForParts is the least profile a test asks to show more than
// one part of a client's CPU: with the system calls about half of it, 8
// samples all in one part happen about once in 200 runs.
const minSamplesForParts = 8

// minSamplesForSyscalls is the least profile a test asks to show the
// round trips' system calls at all: at about two thirds of the client's CPU
// (64-72 % in the committed bench), 4 samples all elsewhere happen about
// once in 100 runs, 2 about once in 10 (container mode on a loaded machine
// took 2, both in the runtime and go-redis, on 2026-11-28).
const minSamplesForSyscalls = 4

func TestShortRunWritesCompleteReport(t *testing.T) {
	specs, err := benchmark.ParseImpls("local-mutex,redis-setnx-px")
	if err != nil {
		t.Fatal(err)
	}
	opts := benchmark.Defaults(true)
	opts.Impls = specs
	opts.Duration = 60 * time.Millisecond
	opts.Sweep = []int{1, 2, 4}
	opts.Clients = 4
	opts.TTL = time.Second
	opts.Trials = 6 // the fewest with a finite 95% interval of the median
	opts.SweepTrials = 2
	opts.Workloads = benchmark.Workloads // recovery included
	opts.RecoverySections = 40
	opts.Command = "go test ./benchmark"
	var progress bytes.Buffer
	opts.Progress = &progress
	rep, err := benchmark.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "results")
	files, err := benchmark.Write(rep, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "redis-setnx-px") {
		t.Errorf("the progress bar never named the implementation:\n%s", progress.String())
	}

	// bench.json decodes, names both locks, and holds only finite numbers.
	raw, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got record.Bench
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("bench.json: %v", err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	if n := checkFinite(t, "bench.json", generic); n < 100 {
		t.Errorf("bench.json holds only %d numbers", n)
	}
	if len(got.Impls) != 2 {
		t.Fatalf("bench.json has %d implementations, want 2", len(got.Impls))
	}
	for _, r := range got.Impls {
		if r.Uncontended == nil || r.Contended == nil || r.Independent == nil || r.Recovery == nil || len(r.Sweep) != 3 {
			t.Errorf("%s: a workload is missing: %+v", r.Name, r)
			continue
		}
		if len(r.Uncontended.PairsPerSec.Trials) != 6 || r.Uncontended.PairsPerSec.Median <= 0 || r.Contended.PairsPerSec.Median <= 0 {
			t.Errorf("%s: want 6 trials of positive pairs/s, got %+v", r.Name, r.Uncontended.PairsPerSec)
		}
		for name, st := range map[string]record.Stat{"uncontended": r.Uncontended.PairsPerSec, "contended": r.Contended.PairsPerSec} {
			if st.CILo == nil || st.CIHi == nil || *st.CILo > st.Median || *st.CIHi < st.Median || st.CIConfidence < record.Confidence {
				t.Errorf("%s %s pairs/s: no %v interval around the median: %+v", r.Name, name, record.Confidence, st)
			}
		}
		if sp := r.Sweep[0].PairsPerSec; len(sp.Trials) != 2 {
			t.Errorf("%s: sweep ran in %d trials, want 2", r.Name, len(sp.Trials))
		}
		if r.Contended.Overlaps.Max != 0 {
			t.Errorf("%s: a correct lock showed %v overlapping grants", r.Name, r.Contended.Overlaps.Max)
		}
		if r.Recovery.Seconds == nil && r.Recovery.Note == "" {
			t.Errorf("%s: recovery has neither a figure nor a reason", r.Name)
		}
	}
	// A lock on one server is held to that server's round trips measured
	// in the slices between its own: its fraction of the bound is one
	// figure a trial, and the bound is the probe's median over them. The
	// in-process mutex has no bound.
	for _, r := range got.Impls {
		u := r.Uncontended
		switch {
		case r.Name == "local-mutex" && (u.OfBound != nil || u.BoundPairsPerSec != nil):
			t.Errorf("%s: a bound for a lock with no server: %+v", r.Name, u)
		case r.Name == "local-mutex":
		case u.OfBound == nil || len(u.OfBound.Trials) != 6 || u.OfBound.Median <= 0:
			t.Errorf("%s: want its fraction of the bound in 6 trials, got %+v", r.Name, u.OfBound)
		case u.BoundPairsPerSec == nil || *u.FractionOfBound != u.OfBound.Median:
			t.Errorf("%s: bound %v, fraction %v, not the trials' median %v", r.Name, u.BoundPairsPerSec, u.FractionOfBound, u.OfBound.Median)
		}
	}
	// The recovery workload really ran: the holder-crash scenario's workers
	// (this binary, re-executed) took the lock, one was SIGKILLed, and
	// another took over, within the scenario's bound.
	if rc := got.Impls[1].Recovery; rc.Seconds == nil || *rc.Seconds <= 0 || math.IsInf(*rc.Seconds, 0) ||
		rc.Verdict != "safe" || strings.Contains(rc.Note, "timed out") || strings.HasPrefix(rc.Note, "n/a") {
		t.Errorf("redis-setnx-px: no recovery measured: %+v", rc)
	}
	if rt := got.Impls[1].RoundTrips; rt == nil || !rt.Agrees() {
		t.Errorf("redis-setnx-px: round trips not counted or not as declared: %+v", rt)
	}
	if got.Impls[0].RoundTrips != nil {
		t.Errorf("local-mutex has no server, yet round trips were counted: %+v", got.Impls[0].RoundTrips)
	}
	redis := got.Impls[1]
	if redis.Name != "redis-setnx-px" || redis.Uncontended.FractionOfBound == nil || redis.Contended.CostPerAcquisition == nil {
		t.Errorf("redis-setnx-px lacks its bound or its cost: %+v", redis)
	} else if f := *redis.Uncontended.FractionOfBound; f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		// Only that it is a figure: how it compares with the bound is a
		// measurement of a shared, noisy machine, reported, never asserted.
		t.Errorf("redis-setnx-px's fraction of its bound is %v, want a positive number", f)
	}
	// CPU per pair: the Redis server's and the clients' for the Redis
	// lock; the clients' only for the in-process mutex, which has none.
	// Both are read in windows of their own in the first SweepTrials
	// trials, as is the cost.
	for _, c := range []*record.CPUPerPair{redis.Uncontended.CPU, redis.Contended.CPU} {
		if c == nil || c.Clients.Median <= 0 || c.Servers == nil || c.Servers.Median <= 0 || len(c.Servers.Trials) != 2 {
			t.Errorf("redis-setnx-px: CPU per pair %+v, want the clients' and the server's in each of 2 trials", c)
		}
	}
	// Where the Redis lock's client CPU went, from the profile of its
	// uncontended slices: the round trips' system calls among the parts,
	// and the server's own time in its commands; the in-process mutex is
	// not profiled.
	if c := redis.Uncontended.CPU; c != nil {
		var sum float64
		for _, us := range c.ClientParts {
			sum += us
		}
		t.Logf("redis-setnx-px: client CPU parts %v on %d samples", c.ClientParts, c.ProfileSamples)
		if c.ProfileSamples <= 0 || (c.ProfileSamples >= minSamplesForSyscalls && c.ClientParts[record.PartSyscalls] <= 0) {
			t.Errorf("redis-setnx-px: client CPU parts %v on %d samples, want its round trips' system calls",
				c.ClientParts, c.ProfileSamples)
		}
		// "Among others" needs samples enough that every one landing in
		// the system calls would be a fluke: a short run on this machine
		// takes about 11 locally, 4 in container mode, where the round
		// trips through the container network take most of the client's
		// time and all 4 landed there (a run of 2026-11-28).
		if c.ProfileSamples >= minSamplesForParts && sum <= c.ClientParts[record.PartSyscalls] {
			t.Errorf("redis-setnx-px: client CPU parts %v on %d samples, want the round trips' system calls among others",
				c.ClientParts, c.ProfileSamples)
		}
		if c.ServerCommands == nil || c.ServerCommands.Median <= 0 || c.ServerCommands.Median > c.Servers.Median {
			t.Errorf("redis-setnx-px: the server's time in commands is %+v, want a positive part of its CPU %v", c.ServerCommands, c.Servers.Median)
		}
	}
	if c := got.Impls[0].Uncontended.CPU; c != nil && (len(c.ClientParts) > 0 || c.ServerCommands != nil) {
		t.Errorf("local-mutex: profiled %v, commands %+v; it makes no round trip", c.ClientParts, c.ServerCommands)
	}
	if c := redis.Contended.CostPerAcquisition; c != nil && (len(c.Trials) != 2 || c.Median <= 0) {
		t.Errorf("redis-setnx-px: cost %+v, want a positive figure in each of 2 trials", c)
	}
	// Its cost command by command: every grant is a SET (NX PX), and the
	// release a script (EVALSHA) that calls GET and DEL; the by-command
	// figures add up to about the cost, read around the same windows.
	if by := redis.Contended.CostByCommand; by["set"] < 1 || by["evalsha"] < 1 || by["del"] < 1 {
		t.Errorf("redis-setnx-px: cost by command %v, want at least one SET, EVALSHA and DEL per acquisition", by)
	} else if c := redis.Contended.CostPerAcquisition; c != nil {
		var sum float64
		for _, n := range by {
			sum += n
		}
		if sum < 0.5*c.Median || sum > 2*c.Median {
			t.Errorf("redis-setnx-px: cost by command sums to %v per acquisition, the cost is %v", sum, c.Median)
		}
	}
	if by := got.Impls[0].Contended.CostByCommand; len(by) != 0 {
		t.Errorf("local-mutex: cost by command %v, but it has no server", by)
	}
	if st := got.Settings; st.Slices != 2 || st.IndependentTrials != 6 {
		t.Errorf("settings: %d slices, independent keys in %d trials; want -quick's 2 and 6", st.Slices, st.IndependentTrials)
	}
	if c := got.Impls[0].Uncontended.CPU; c == nil || c.Clients.Median <= 0 || c.Servers != nil {
		t.Errorf("local-mutex: CPU per pair %+v, want the clients' only", c)
	}
	if p := got.Machine.Placement; !strings.Contains(p, "servers pinned to CPU") && !strings.Contains(p, "share") {
		t.Errorf("the report does not say where servers and clients ran: %q", p)
	}
	if len(got.Limits) != 1 || got.Limits[0].Backend != "redis" {
		t.Errorf("limits: %+v, want the Redis round trip", got.Limits)
	} else if w, fo := got.Limits[0].WakeUp, got.Limits[0].FanOut; w == nil || len(w.HopMS.Trials) != 6 || w.HopMS.Min <= 0 || fo != nil {
		// One lock node: the wake-up hop in every trial, no fan-out.
		t.Errorf("Redis limits: wake-up %+v, fan-out %+v; want a hop in each of 6 trials and no fan-out", w, fo)
	}

	// bench.md names every lock in every table and links every chart.
	md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| wake-up hop (`RPUSH → BLPOP`) |") {
		t.Error("bench.md lacks the wake-up hop")
	}
	if !strings.Contains(string(md), "## Where an uncontended pair's CPU goes") || !strings.Contains(string(md), "| `redis-setnx-px` | 2.00 |") {
		t.Error("bench.md lacks redis-setnx-px's CPU parts")
	}
	if !strings.Contains(string(md), "command by command") || !strings.Contains(string(md), "EVALSHA ") {
		t.Error("bench.md lacks the Redis commands of an acquisition, command by command")
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(string(md), bad) {
			t.Errorf("bench.md contains %s", bad)
		}
	}
	sections := strings.Split(string(md), "\n## ")
	tables := 0
	for _, sec := range sections {
		if !strings.Contains(sec, "| implementation |") {
			continue
		}
		tables++
		for _, name := range []string{"`local-mutex`", "`redis-setnx-px`"} {
			if !strings.Contains(sec, name) {
				t.Errorf("section %q lacks %s", strings.SplitN(sec, "\n", 2)[0], name)
			}
		}
	}
	if tables < 8 {
		t.Errorf("bench.md has %d implementation tables, want one per workload (8)", tables)
	}

	// Every chart is linked and parses as SVG.
	if len(got.Charts) != 4 {
		t.Errorf("charts %v, want 4", got.Charts)
	}
	for _, c := range got.Charts {
		if !strings.Contains(string(md), "("+c+")") {
			t.Errorf("bench.md does not link %s", c)
		}
		checkSVG(t, filepath.Join(dir, c))
	}
	if len(files) != 2+len(got.Charts) {
		t.Errorf("wrote %v", files)
	}
	// Nothing but the report is left beside it (the temp dir is gone).
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func checkFinite(t *testing.T, path string, v any) int {
	t.Helper()
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("%s: %v is not a finite number", path, x)
		}
		return 1
	case map[string]any:
		n := 0
		for k, e := range x {
			n += checkFinite(t, path+"."+k, e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += checkFinite(t, path+"[]", e)
		}
		return n
	}
	return 0
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s is not well-formed XML: %v", path, err)
			return
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
}

// Names are checked before anything runs: an unknown one is an error that
// lists the valid ones.
func TestUnknownNamesListValidOnes(t *testing.T) {
	tests := []struct {
		impls, workloads string
		want             string
	}{
		{"nope", "", "redis-setnx-px"},
		{"none", "", "local-mutex"}, // the no-lock control is not measured
		{"", "nope", "uncontended"},
	}
	for _, tt := range tests {
		t.Run(tt.impls+tt.workloads, func(t *testing.T) {
			_, err1 := benchmark.ParseImpls(tt.impls)
			_, err2 := benchmark.ParseWorkloads(tt.workloads, benchmark.Workloads)
			err := errors.Join(err1, err2)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error listing %q", err, tt.want)
			}
		})
	}
}

// Round trips per uncontended pair are counted by the servers themselves;
// the declaration in each lock's impls.Spec is what a reader is told, so the two
// must agree for every server-backed lock (a new lock must be declared).
func TestDeclaredRoundTripsMatchServerCounters(t *testing.T) {
	// Each lock on the single topology, or, if it has nothing to run on
	// there (the WAIT lock needs replicas), on the first topology that
	// carries it, or the one measuredOn names.
	//
	// The WAIT locks are measured on the Sentinel group, not the Redis
	// Cluster, the first that carries it: a cluster starts in 6 s, the group
	// in 3, and make test is at its limit. Its count on the cluster (3.01
	// per pair, `bench -topology redis-cluster -impl redis-setnx-px-wait
	// -workload uncontended -duration 20ms -trials 1`) and the routing that
	// makes it 3 (impls/redislock's TestSetNXPXWaitAsksTheKeysOwnMastersReplica)
	// are held elsewhere.
	measuredOn := map[string]string{"redis-setnx-px-wait": topology.RedisSentinelName, "redis-setnx-px-wait-all": topology.RedisSentinelName}
	byTopology := map[string][]string{}
	var order []string
	for _, s := range benchmark.Measurable() {
		if s.Backend.Kind == "" {
			continue
		}
		for _, named := range topology.All() {
			if on, ok := measuredOn[s.Name]; ok && on != named.Name {
				continue
			}
			if named.Carries(s.Backend.Need()) {
				if byTopology[named.Name] == nil {
					order = append(order, named.Name)
				}
				byTopology[named.Name] = append(byTopology[named.Name], s.Name)
				break
			}
		}
	}
	var results []record.BenchResult
	for _, topo := range order {
		impls, err := benchmark.ParseImpls(strings.Join(byTopology[topo], ","))
		if err != nil {
			t.Fatal(err)
		}
		// A topology whose servers cannot start in this mode (container
		// mode starts no Sentinel) skips its locks, saying why.
		if cannot := startsHere(t, topo, impls); cannot != nil {
			for _, s := range impls {
				t.Run(s.Name, func(t *testing.T) { t.Skipf("on %s: %v", topo, cannot) })
			}
			continue
		}
		opts := benchmark.Defaults(true)
		opts.Impls, opts.Topology = impls, topo
		opts.Workloads = []string{benchmark.Uncontended}
		opts.Duration = 20 * time.Millisecond
		opts.Trials = 1
		rep, err := benchmark.Run(context.Background(), opts)
		if err != nil {
			t.Fatalf("on %s: %v", topo, err)
		}
		if len(rep.Impls) != len(impls) {
			t.Fatalf("measured %d locks on %s, want %d", len(rep.Impls), topo, len(impls))
		}
		results = append(results, rep.Impls...)
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			m := r.RoundTrips
			switch {
			case m == nil:
				t.Fatal("no round-trip count")
			case m.Declared == 0:
				t.Fatalf("counted %.2f round trips per pair (%s) but nothing is declared: declare RoundTrips in the lock's impls.Spec", m.PerPair, m.Counter)
			case !m.Agrees():
				t.Errorf("declared %d round trips per pair (%s), the servers counted %.2f (%s)", m.Declared, m.Note, m.PerPair, m.Counter)
			}
			t.Logf("%.2f round trips per pair (%s)", m.PerPair, m.Counter)
		})
	}
}

// The comparison reports a change only beyond the noise: the U test on the
// two runs' trials, at benchstat's alpha.
func TestCompareReportsFlagsOnlyChangesBeyondNoise(t *testing.T) {
	run := func(unc, con []float64) *record.Bench {
		return &record.Bench{Impls: []record.BenchResult{{
			Name:        "redis-setnx-px",
			Uncontended: &record.UncontendedR{PairsPerSec: benchmark.NewStat(unc)},
			Contended:   &record.ContendedR{PairsPerSec: benchmark.NewStat(con)},
		}}}
	}
	base := []float64{100, 102, 98, 101, 99, 100}
	tests := []struct {
		name      string
		unc, con  []float64
		wantSig   map[string]bool
		wantFound int
	}{
		{"same", base, base, map[string]bool{"uncontended pairs/s": false, "contended pairs/s": false}, 2},
		{"faster", []float64{150, 152, 149, 151, 148, 150}, base, map[string]bool{"uncontended pairs/s": true, "contended pairs/s": false}, 2},
		{"overlapping", []float64{97, 103, 99, 101, 100, 102}, base, map[string]bool{"uncontended pairs/s": false, "contended pairs/s": false}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes := benchmark.CompareReports(run(base, base), run(tt.unc, tt.con))
			if len(changes) != tt.wantFound {
				t.Fatalf("compared %d figures, want %d", len(changes), tt.wantFound)
			}
			for _, c := range changes {
				if want := tt.wantSig[c.Figure]; c.Significant() != want {
					t.Errorf("%s: significant=%v (p=%v), want %v", c.Figure, c.Significant(), c.Cmp.P, want)
				}
			}
		})
	}
}

// The decision chart's y axis: fault scenarios safe without fencing, out of
// those applied, with the no-fault contention scenario left out; a missing
// matrix is no chart, a broken one an error.
func TestLoadSurvival(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `[
		{"impl":"a","scenario":"contention","fencing":false,"verdict":"safe"},
		{"impl":"a","scenario":"holder-crash","fencing":false,"verdict":"safe"},
		{"impl":"a","scenario":"pause-past-ttl","fencing":false,"verdict":"unsafe"},
		{"impl":"a","scenario":"pause-past-ttl","fencing":true,"verdict":"safe"},
		{"impl":"b","scenario":"holder-crash","fencing":false,"verdict":"stuck"}]`)
	tests := []struct {
		name    string
		path    string
		want    map[string]record.Survival
		wantErr bool
	}{
		{"good", good, map[string]record.Survival{"a": {Safe: 1, Applied: 2}, "b": {Safe: 0, Applied: 1}}, false},
		{"missing", filepath.Join(dir, "nope.json"), nil, false},
		{"not json", write("bad.json", "{"), nil, true},
		{"no impl", write("noimpl.json", `[{"scenario":"x"}]`), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := benchmark.LoadSurvival(tt.path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: got %+v, want %+v", k, got[k], v)
				}
			}
		})
	}
}

// startsHere says why a lock of impls cannot start on the named topology
// in this process's server mode, nil when every one can.
func startsHere(t *testing.T, name string, specs []impls.Spec) error {
	t.Helper()
	named, err := topology.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		decl, err := s.Backend.On(named)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster.StartsHere(decl); err != nil {
			return err
		}
	}
	return nil
}
