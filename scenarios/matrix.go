package scenarios

import (
	"context"
	"fmt"
	"slices"

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
		if _, extra := briefExtra[c.Name()]; extra {
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
		if only, ok := briefOnly[t]; ok && !slices.Contains(only, c.Scenario) {
			continue
		}
		if slices.Contains(briefNotFirst, c.Scenario) {
			continue
		}
		own := c.Scenario == "contention" || c.Scenario == "holder-crash" || !s.RunsOn(topology.SingleName) ||
			slices.Contains(briefAlso[t], c.Scenario)
		if own && !seen[t+"|"+c.Scenario] {
			seen[t+"|"+c.Scenario] = true
			out = append(out, c)
		}
	}
	return out
}

// briefOnly narrows a topology's brief cells to these scenarios: a
// topology that is another one plus a setting (redis-sentinel-min-replicas)
// needs contention and one fault to show it starts and bites, not every
// fault again.
var briefOnly = map[string][]string{
	topology.RedisSentinelMinReplicasName: {"contention", "sentinel-master-split"},
}

// briefNotFirst are topology-only scenarios make test runs for the locks
// briefExtra names rather than for the first correct lock: the split at
// the grant is where the WAIT lock differs, and the first lock's verdict
// there repeats sentinel-master-split's.
var briefNotFirst = []string{"sentinel-split-at-grant"}

// briefExtra are cells make test runs besides the first lock's: the WAIT
// lock, unfenced, with no fault and where its WAIT decides (its mutant's
// catcher).
var briefExtra = map[string]bool{
	"redis-setnx-px-wait@redis-sentinel/contention":              true,
	"redis-setnx-px-wait@redis-sentinel/sentinel-split-at-grant": true,
}

// briefAlso are scenarios make test runs briefly on a topology although
// they run on the single one too: on a topology that differs from the
// single one only by its server settings, the cell those settings change.
var briefAlso = map[string][]string{
	// The stalled holder's session idles past the timeout: unsafe for the
	// session-bound locks, where the single topology says safe.
	topology.PGIdleTimeoutsName:   {"pause-past-ttl"},
	topology.MySQLWaitTimeoutName: {"pause-past-ttl"},
}

// briefSkip are cells make test leaves to make matrix, each with why: a
// cell whose verdict is not yet certain run to run would fail make test by
// chance, not by a change.
var briefSkip = map[string]string{
	"etcd-lock@etcd-cluster/leader-isolated": "stuck in about 1 run of 5 (no grant within the bound after the heal), for reasons not yet established",
}
