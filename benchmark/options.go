// Package benchmark measures every lock and every peer library under the
// same load in one run, beside the physical limit of their servers, and
// writes the report: results/bench.md, results/bench.json and SVG charts.
//
// A run starts one set of servers for the whole run, then for each trial
// measures every implementation in turn (interleaved, so that a slow minute
// on a noisy machine hurts every lock a little rather than one a lot), and
// reports medians over the trials with their spread.
package benchmark

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// The workloads a run can select with -workload. Hand-off, fairness and cost
// are read off the contended measurement, so selecting any of them runs it.
const (
	Uncontended = "uncontended"
	Contended   = "contended"
	Handoff     = "handoff"
	Fairness    = "fairness"
	Cost        = "cost"
	Sweep       = "sweep"
	Independent = "independent"
	Recovery    = "recovery"
)

// Workloads lists every workload name in report order.
var Workloads = []string{Uncontended, Contended, Handoff, Fairness, Cost, Sweep, Independent, Recovery}

// Options configure one benchmark run.
type Options struct {
	Impls []impls.Spec // what to measure, in report order
	// Topology names the servers' topology (topology.Named; empty: the
	// single one); every lock measured must be one it carries.
	Topology  string
	Workloads []string // subset of Workloads
	// Duration is how long each measurement runs; sweep points other than
	// Clients run for a third of it (sweepShare), since only their shape
	// matters.
	Duration time.Duration
	Clients  int   // clients of the contended and independent-keys workloads
	Sweep    []int // client counts of the contended sweep
	TTL      time.Duration
	Trials   int
	// Slices is how many turns the uncontended and contended windows of a
	// trial are cut into, each lock of a backend taking its turn (see
	// interleave): Duration/Slices each.
	Slices int
	// SweepTrials is how many of the trials (the first ones) also run the
	// sweep and the windows the cost and the CPU time are read around: the
	// sweep's shape is what it shows, and counted work moves less than
	// time, so they get fewer trials than the figures the targets are
	// judged on, and the run keeps to its budget.
	SweepTrials int
	Quick       bool
	// RecoverySections is how many critical sections the holder-crash
	// scenario runs per implementation.
	RecoverySections int
	External         cluster.External
	// SplitCPUs puts the servers on one CPU and the clients on the others
	// (see cpuSplit). Off by default: on this 2-core machine it left the
	// figures' intervals as wide as sharing did (a 6-trial run of eight
	// locks each way: rates ±21% and ±16% split, ±20% and ±18% shared), so
	// the noise is not the clients and servers taking turns on a core; and
	// it crowds a multi-server topology onto one CPU.
	SplitCPUs bool
	// Survival places each lock on the decision chart (LoadSurvival; nil:
	// no chart).
	Survival map[string]record.Survival
	// Command is the command line as typed, for the report.
	Command string
	// Progress receives the progress bar (nil: none).
	Progress io.Writer
	// Logf reports what happens beside the bar (may be nil).
	Logf func(format string, args ...any)
}

// Defaults returns the options of a full run (quick false) or of a -quick
// run. Six trials is the fewest that give benchstat's 95% interval of a
// median a finite width, and that interval is then the slowest and the
// fastest trial: one noisy second decides it. A full run takes twelve
// trials of half a second instead, in the same time: the interval is then
// the 3rd to the 10th of twelve, and it came out narrower on this machine
// (eight locks, 6x1s against 12x500ms: uncontended pairs/s ±21% against
// ±16%, contended ±16% against ±11%, medians of the locks' half-widths). A
// quick run keeps six short ones, about a minute.
func Defaults(quick bool) Options {
	o := Options{
		Duration: 500 * time.Millisecond, Clients: 8, Sweep: []int{1, 2, 4, 8, 16, 32},
		TTL: 2 * time.Second, Trials: 12, Slices: 5, SweepTrials: 3, RecoverySections: 200,
		Workloads: append([]string(nil), Workloads...),
	}
	if quick {
		o.Quick = true
		o.Trials = 6
		o.Duration = 100 * time.Millisecond
		o.Slices = 2
		o.SweepTrials = 2
		o.Sweep = []int{1, 8, 32}
		// A crash recovery takes a TTL plus server start-up per lock: too
		// slow for a one-minute look, so -quick reports it as skipped.
		o.Workloads = slices.DeleteFunc(o.Workloads, func(w string) bool { return w == Recovery })
	}
	return o
}

// Measurable returns the implementations a benchmark covers: every one but
// the `none` control, which is not a lock (local-mutex stays, as the
// in-process reference).
func Measurable() []impls.Spec {
	var out []impls.Spec
	for _, s := range impls.All() {
		if s.Name != "none" {
			out = append(out, s)
		}
	}
	return out
}

// ParseImpls resolves a comma-separated list of names ("" means every
// measurable one); an unknown name is an error listing the valid ones.
func ParseImpls(list string) ([]impls.Spec, error) {
	all := Measurable()
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	var out []impls.Spec
	for _, n := range splitList(list) {
		i := slices.IndexFunc(all, func(s impls.Spec) bool { return s.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown implementation %q; valid names: %s", n, strings.Join(names, ", "))
		}
		if !slices.ContainsFunc(out, func(s impls.Spec) bool { return s.Name == n }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// ParseWorkloads resolves a comma-separated list of workloads ("" means every one).
func ParseWorkloads(list string, defaults []string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return defaults, nil
	}
	var out []string
	for _, w := range splitList(list) {
		if !slices.Contains(Workloads, w) {
			return nil, fmt.Errorf("unknown workload %q; valid names: %s", w, strings.Join(Workloads, ", "))
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Validate checks the numeric options.
func (o *Options) Validate() error {
	switch {
	case len(o.Impls) == 0:
		return fmt.Errorf("no implementation selected")
	case len(o.Workloads) == 0:
		return fmt.Errorf("no workload selected")
	case o.Duration <= 0:
		return fmt.Errorf("-duration must be positive")
	case o.Clients < 2:
		return fmt.Errorf("-clients must be at least 2 (contention needs two)")
	case o.TTL <= 0:
		return fmt.Errorf("-ttl must be positive")
	case o.Trials < 1:
		return fmt.Errorf("-trials must be at least 1")
	case o.Slices < 1:
		return fmt.Errorf("-slices must be at least 1")
	case o.Duration/time.Duration(o.Slices) < time.Millisecond:
		return fmt.Errorf("-duration %v cut into %d slices leaves less than a millisecond a slice", o.Duration, o.Slices)
	case o.SweepTrials < 0:
		return fmt.Errorf("sweep trials must not be negative")
	}
	for _, n := range o.Sweep {
		if n < 1 {
			return fmt.Errorf("sweep client counts must be at least 1")
		}
	}
	named, err := topology.Lookup(o.Topology)
	if err != nil {
		return err
	}
	for _, s := range o.Impls {
		if s.Backend.Kind != "" && !named.Carries(s.Backend.Need()) {
			return fmt.Errorf("the %s topology cannot carry %s (%s)", named.Name, s.Name, s.Backend)
		}
	}
	return nil
}

func (o *Options) has(w string) bool { return slices.Contains(o.Workloads, w) }

// contended reports whether the contended measurement must run: it feeds
// the hand-off, fairness and cost tables too.
func (o *Options) contended() bool {
	return o.has(Contended) || o.has(Handoff) || o.has(Fairness) || o.has(Cost)
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// sweepShare divides Duration for the sweep points: they show a shape, and
// the full run has a budget of about ten minutes.
const sweepShare = 3
