package scenarios

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/impls"
)

// Cell is one implementation under one scenario, with or without fencing.
type Cell struct {
	Impl     impls.Spec
	Scenario string
	Fencing  bool
}

// Name identifies the cell, e.g. "redis-setnx-px/pause-past-ttl/fenced".
func (c Cell) Name() string {
	n := c.Impl.Name + "/" + c.Scenario
	if c.Fencing {
		n += "/fenced"
	}
	return n
}

// Expect is the cell's expected verdict.
func (c Cell) Expect() Expectation { return Expect(c.Impl, c.Scenario, c.Fencing) }

// Cells lists every applicable cell of specs × scenario names: each
// scenario without fencing, and with fencing where the lock issues tokens
// (the contention run has no stale writer, so fencing changes nothing there
// and is left out).
func Cells(specs []impls.Spec, names []string) ([]Cell, error) {
	var out []Cell
	for _, spec := range specs {
		for _, name := range names {
			s, err := Lookup(name)
			if err != nil {
				return nil, err
			}
			for _, fencing := range []bool{false, true} {
				if fencing && (!spec.Caps.Fencing || name == "contention") {
					continue
				}
				if s.Applies != nil && s.Applies(spec, fencing) != nil {
					continue
				}
				out = append(out, Cell{Impl: spec, Scenario: name, Fencing: fencing})
			}
		}
	}
	return out, nil
}

// RunCell runs a cell runs times (each with its own seed derived from
// base) and returns every outcome; the cell's verdict is the worst one, so
// a single counterexample makes it unsafe. A cell expected unsafe gets at
// least UnsafeTries runs and stops at its first counterexample: a fault
// lands at a moment the scheduler picks, and "unsafe" means that a
// counterexample exists, not that every run shows one.
func RunCell(ctx context.Context, c Cell, runs int, base Options) ([]*Outcome, error) {
	max := runs
	if c.Expect().Verdict == Unsafe && max < UnsafeTries {
		max = UnsafeTries
	}
	var outs []*Outcome
	for i := 0; i < max; i++ {
		o := base
		o.Impl, o.Fencing = c.Impl, c.Fencing
		o.Seed = base.Seed + int64(i)
		out, err := Run(ctx, c.Scenario, o)
		if err != nil {
			return outs, fmt.Errorf("%s: %w", c.Name(), err)
		}
		outs = append(outs, out)
		if i+1 >= runs && out.Verdict == Unsafe {
			break
		}
	}
	return outs, nil
}

// UnsafeTries is how many runs a cell expected unsafe gets to show its
// counterexample, in the matrix command and in the matrix test alike.
const UnsafeTries = 3

// Worst combines the verdicts of several runs: unsafe beats unknown beats
// stuck beats unavailable beats safe.
func Worst(outs []*Outcome) Verdict {
	rank := map[Verdict]int{Safe: 0, Unavailable: 1, Stuck: 2, Unknown: 3, Unsafe: 4}
	v := Safe
	for _, o := range outs {
		if rank[o.Verdict] > rank[v] {
			v = o.Verdict
		}
	}
	return v
}

// CellResult is one row of results/correctness.json: written by `bench
// matrix`, read by the lessons, so both agree on one schema.
type CellResult struct {
	Impl           string             `json:"impl"`
	Scenario       string             `json:"scenario"`
	Fencing        bool               `json:"fencing"`
	Verdict        Verdict            `json:"verdict"`
	Expected       Verdict            `json:"expected"`
	Why            string             `json:"why"`
	Runs           int                `json:"runs"`
	Sections       int                `json:"sections_checked"`
	Unknown        int                `json:"sections_unknown"`
	RecoveryMillis []int64            `json:"recovery_ms,omitempty"`
	Figures        map[string]float64 `json:"figures,omitempty"`
	Detail         string             `json:"detail,omitempty"`
	Seeds          []int64            `json:"seeds"`
	Counterexample string             `json:"counterexample,omitempty"`
	History        string             `json:"history,omitempty"`
	Seconds        float64            `json:"seconds"`
}
