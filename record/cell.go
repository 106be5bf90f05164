package record

import (
	"fmt"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/topology"
	"strings"
)

// Cell is one row of results/correctness.json: one lock × topology ×
// scenario × fencing, written by `bench matrix`, read by the lessons and
// the report site, so all agree on one schema.
type Cell struct {
	Impl string `json:"impl"`
	// Topology names the servers' topology; empty (a matrix older than the
	// axis) means the single one (topology.Or).
	Topology string `json:"topology,omitempty"`
	// Profile names the timeouts the cell ran with (topology.Profile);
	// empty is the fast one, as in every matrix older than the axis, so a
	// fast cell's row reads as it always did.
	Profile     string            `json:"profile,omitempty"`
	Scenario    string            `json:"scenario"`
	Fencing     bool              `json:"fencing"`
	Verdict     checker.Verdict   `json:"verdict"`
	Expected    checker.Verdict   `json:"expected"`
	Why         string            `json:"why"`
	Runs        int               `json:"runs"`
	RunVerdicts []checker.Verdict `json:"run_verdicts"`
	// ExercisedRuns counts the runs whose fault put the lock at risk while
	// another client came for it (checker.Exercised): a safe cell needs a
	// majority of its clean runs so (checker.CellVerdict). An unsafe run
	// counts when its window had others in it too.
	ExercisedRuns int `json:"exercised_runs"`
	Sections      int `json:"sections_checked"`
	// MinSections and MinGrantsAfterFault are the least progress of any
	// one run: what the verdict's weakest run rests on.
	MinSections         int     `json:"min_sections_per_run"`
	GrantsAfterFault    int     `json:"grants_after_fault"`
	MinGrantsAfterFault int     `json:"min_grants_after_fault_per_run"`
	Unknown             int     `json:"sections_unknown"`
	RecoveryMillis      []int64 `json:"recovery_ms,omitempty"`
	// LeaseLeftMillis is, per run whose fault struck a holder, how much of
	// its lease was left at the strike (checker.LeaseLeft): a recovery is
	// read against it, as a crash late in the lease times the lab's own
	// delays rather than the lock's freeing of a dead holder's claim.
	LeaseLeftMillis []int64            `json:"lease_left_ms,omitempty"`
	Figures         map[string]float64 `json:"figures,omitempty"`
	Detail          string             `json:"detail,omitempty"`
	Seeds           []int64            `json:"seeds"`
	Counterexample  string             `json:"counterexample,omitempty"`
	// History is the counterexample's recorded history, or, in a cell
	// with no counterexample, its first stuck run's.
	History string  `json:"history,omitempty"`
	Seconds float64 `json:"seconds"`
	// PhaseSeconds is where Seconds went, summed over the runs
	// (engine.Phase): servers, workers, warm-up, fault, after, check, ...
	PhaseSeconds map[string]float64 `json:"phase_seconds,omitempty"`
	// TTL, Clients and Processes are the settings the cell ran with, so a
	// figure quoted from it can say them (absent in matrices older than
	// them; the report's header then holds the TTL).
	TTL       string `json:"ttl,omitempty"`
	Clients   int    `json:"clients,omitempty"`
	Processes bool   `json:"processes,omitempty"`
	// UntilStable is set on a cell that ran until its answer was stable
	// (checker.UntilStable) instead of the fixed runs every cell gets:
	// why it did, and why it stopped (issue 44).
	UntilStable *StableRuns `json:"until_stable,omitempty"`
	// Alone says why the cell ran with no other cell beside it (its
	// scenario's or its topology's reason, scenarios.AloneBecause); empty
	// for a cell that shared the machine, and in matrices older than it.
	Alone string `json:"alone,omitempty"`
}

// StableRuns is why a race-sensitive cell ran until its answer was stable,
// and why it stopped.
type StableRuns struct {
	// Because is RaceRow (its expectation row names the race its verdict
	// turns on) or RunsDisagreed (its runs gave different verdicts in the
	// matrix before, or in one before that: a cell that ever disagreed
	// keeps the reason).
	Because string `json:"because"`
	// Evidence is the race the row names, or the disagreeing runs'
	// verdicts and the matrix they were read from.
	Evidence string `json:"evidence"`
	// Stopped is why its runs ended: a counterexample, enough runs that
	// could have shown one and did not, or the bound.
	Stopped checker.Stop `json:"stopped"`
}

// The reasons a cell runs until stable (StableRuns.Because).
const (
	RaceRow       = "race row"
	RunsDisagreed = "runs disagreed"
)

// Key identifies the cell in a matrix: lock, topology, scenario, fencing,
// and its profile when it is not the fast one (a fast cell's key is the
// one it always had).
func (r Cell) Key() string {
	k := fmt.Sprintf("%s|%s|%s|%t", r.Impl, topology.Or(r.Topology), r.Scenario, r.Fencing)
	if p := topology.OrFast(r.Profile); p != topology.FastName {
		k += "|" + p
	}
	return k
}

// ProfileLabel is how a table shows the cell's profile beside its verdict
// ("production: "), empty for the fast one.
func (r Cell) ProfileLabel() string {
	if p := topology.OrFast(r.Profile); p != topology.FastName {
		return p + ": "
	}
	return ""
}

// Row is the matrix row a cell is in: its lock, and its topology when it
// is not the single one ("zookeeper @ zk-ensemble"), for every table and
// page that shows the grid.
func (r Cell) Row() string { return rowName(r.Impl, r.Topology) }

// rowName names a lock's row on a topology: the lock alone on the single
// one, "lock @ topology" on any other.
func rowName(impl, topo string) string {
	if t := topology.Or(topo); t != topology.SingleName {
		return impl + topologySep + t
	}
	return impl
}

// topologySep joins a lock and its topology in a row's name (rowName, and
// the benchmark's Bench.Append).
const topologySep = " @ "

// ImplOf is the lock a row names ("zookeeper @ zk-ensemble" is
// zookeeper's); a name without a topology is its own.
func ImplOf(row string) string {
	impl, _ := SplitRow(row)
	return impl
}

// SplitRow is the lock and the topology a row names; a name without a
// topology is on the single one.
func SplitRow(row string) (impl, topo string) {
	impl, topo, _ = strings.Cut(row, topologySep)
	return impl, topology.Or(topo)
}

// VerdictText is the cell's verdict as the tables show it: a safe or
// not-exercised cell says how many of its runs exercised the fault ("safe
// (3 of 3 exercised)"), as a safe verdict means only as much as the runs
// whose fault put the lock at risk; any other verdict stands alone.
func (r Cell) VerdictText() string {
	if checker.RestsOnExercise(r.Verdict) {
		return fmt.Sprintf("%s (%d of %d exercised)", r.Verdict, r.ExercisedRuns, r.Runs)
	}
	return string(r.Verdict)
}
