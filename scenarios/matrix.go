package scenarios

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// Cell is one implementation on one topology under one scenario, with or
// without fencing.
type Cell struct {
	Impl     impls.Spec
	Topology string // a topology.Named's name; empty is the single one
	Scenario string
	Fencing  bool
}

// Name identifies the cell, e.g. "redis-setnx-px/pause-past-ttl/fenced",
// or "zookeeper@zk-ensemble/leader-isolated" off the single topology (so a
// single-topology cell keeps the name, and the shard, it always had).
func (c Cell) Name() string {
	n := c.Impl.Name
	if t := topology.Or(c.Topology); t != topology.SingleName {
		n += "@" + t
	}
	n += "/" + c.Scenario
	if c.Fencing {
		n += "/fenced"
	}
	return n
}

// Expect is the cell's row in the reviewed expectation table.
func (c Cell) Expect() (Expectation, error) {
	return Expected(c.Impl.Name, c.Topology, c.Scenario, c.Fencing)
}

// Cells lists every applicable cell of specs × topologies × scenario
// names: each scenario on each topology it runs on that carries the lock,
// without fencing, and with fencing where the lock issues tokens (the
// contention run has no stale writer, so fencing changes nothing there and
// is left out).
func Cells(specs []impls.Spec, names []string) ([]Cell, error) {
	var out []Cell
	for _, spec := range specs {
		for _, t := range topology.All() {
			for _, name := range names {
				s, err := Lookup(name)
				if err != nil {
					return nil, err
				}
				for _, fencing := range []bool{false, true} {
					if fencing && (!spec.Caps.Fencing || name == "contention") {
						continue
					}
					if s.Demo || s.AppliesOn(spec, t.Name, fencing) != nil {
						continue
					}
					out = append(out, Cell{Impl: spec, Topology: t.Name, Scenario: name, Fencing: fencing})
				}
			}
		}
	}
	return out, nil
}

// RunCell runs a cell exactly runs times, each with its own seed derived
// from base, and returns every outcome. Every cell gets the same effort,
// whatever the lab expects of it: a cell expected safe has as many chances
// to show a counterexample as one expected unsafe. The cell's verdict is
// the worst of its runs (checker.CellVerdict).
func RunCell(ctx context.Context, c Cell, runs int, base engine.Options) ([]*engine.Outcome, error) {
	var outs []*engine.Outcome
	for i := 0; i < runs; i++ {
		o := base
		o.Impl, o.Topology, o.Fencing = c.Impl, c.Topology, c.Fencing
		o.Seed = base.Seed + int64(i)
		out, err := Run(ctx, c.Scenario, o)
		if err != nil {
			return outs, fmt.Errorf("%s: %w", c.Name(), err)
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// CellResult is one row of results/correctness.json: written by `bench
// matrix`, read by the lessons, so both agree on one schema.
type CellResult struct {
	Impl string `json:"impl"`
	// Topology names the servers' topology; empty (a matrix older than the
	// axis) means the single one (topology.Or).
	Topology    string    `json:"topology,omitempty"`
	Scenario    string    `json:"scenario"`
	Fencing     bool      `json:"fencing"`
	Verdict     Verdict   `json:"verdict"`
	Expected    Verdict   `json:"expected"`
	Why         string    `json:"why"`
	Runs        int       `json:"runs"`
	RunVerdicts []Verdict `json:"run_verdicts"`
	Sections    int       `json:"sections_checked"`
	// MinSections and MinGrantsAfterFault are the least progress of any
	// one run: what the verdict's weakest run rests on.
	MinSections         int                `json:"min_sections_per_run"`
	GrantsAfterFault    int                `json:"grants_after_fault"`
	MinGrantsAfterFault int                `json:"min_grants_after_fault_per_run"`
	Unknown             int                `json:"sections_unknown"`
	RecoveryMillis      []int64            `json:"recovery_ms,omitempty"`
	Figures             map[string]float64 `json:"figures,omitempty"`
	Detail              string             `json:"detail,omitempty"`
	Seeds               []int64            `json:"seeds"`
	Counterexample      string             `json:"counterexample,omitempty"`
	History             string             `json:"history,omitempty"`
	Seconds             float64            `json:"seconds"`
	// PhaseSeconds is where Seconds went, summed over the runs
	// (engine.Phase): servers, workers, warm-up, fault, after, check, ...
	PhaseSeconds map[string]float64 `json:"phase_seconds,omitempty"`
	// TTL, Clients and Processes are the settings the cell ran with, so a
	// figure quoted from it can say them (absent in matrices older than
	// them; the report's header then holds the TTL).
	TTL       string `json:"ttl,omitempty"`
	Clients   int    `json:"clients,omitempty"`
	Processes bool   `json:"processes,omitempty"`
}

// Row is the matrix row a cell is in: its lock, and its topology when it
// is not the single one ("zookeeper @ zk-ensemble"), for every table and
// page that shows the grid.
func (r CellResult) Row() string {
	if t := topology.Or(r.Topology); t != topology.SingleName {
		return r.Impl + " @ " + t
	}
	return r.Impl
}

// Brief keeps what make test runs of the matrix: every cell on the single
// topology (of a guest, only its holder-crash cell: the SIGKILL of the
// worker must take the guest library with it, and the guest's conformance
// run covers the rest of make test's share), and each other topology briefly: contention, a crashed holder
// and the faults only that kind of topology has (the scenarios that do not
// run on the single one), unfenced, for the first correct lock of ours that
// has the cell (cells come ours first), less the cells in briefSkip. `bench matrix` runs them all: a cell off the
// single topology runs alone and takes a dozen seconds, and the other
// locks' cells there repeat what the single topology shows of them.
func Brief(cells []Cell) []Cell {
	var out []Cell
	seen := map[string]bool{}
	for _, c := range cells {
		t := topology.Or(c.Topology)
		if t == topology.SingleName {
			if c.Impl.Guest && (c.Scenario != "holder-crash" || c.Fencing) {
				continue
			}
			out = append(out, c)
			continue
		}
		s, err := Lookup(c.Scenario)
		if err != nil || c.Fencing || c.Impl.Peer || c.Impl.Broken != "" {
			continue
		}
		if _, skip := briefSkip[c.Name()]; skip {
			continue
		}
		if (c.Scenario == "contention" || c.Scenario == "holder-crash" || !s.RunsOn(topology.SingleName)) && !seen[t+"|"+c.Scenario] {
			seen[t+"|"+c.Scenario] = true
			out = append(out, c)
		}
	}
	return out
}

// briefSkip are cells make test leaves to make matrix, each with why: a
// cell whose verdict is not yet certain run to run would fail make test by
// chance, not by a change.
var briefSkip = map[string]string{
	"etcd-lock@etcd-cluster/leader-isolated": "stuck in about 1 run of 5 (no grant within the bound after the heal), for reasons not yet established",
}
