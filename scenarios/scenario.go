// Package scenarios is data: the named scenarios the lab runs against each
// lock (each names a fixed nemesis schedule, a workload, or both), which
// locks each applies to, the cells of the verdict matrix and the reviewed
// expectation table.
// Package engine runs them (engine.RunScenario, engine.RunCell); package
// checker judges them.
package scenarios

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// Verdict is what the checker concluded; scenarios only record, and
// package checker decides (checker.Decide).
type Verdict = checker.Verdict

// Scenario is a workload with its faults, as a value: the engine runs what
// it names (a Schedule, a Workload, or a workload under a schedule).
type Scenario struct {
	Name    string
	Summary string
	// Applies returns nil when the scenario can run against spec (with
	// fencing if asked), or the reason it cannot.
	Applies func(spec impls.Spec, fencing bool) error
	// Topologies names the topologies the scenario runs on (nil: the
	// single one). A topology that cannot carry the lock is left out.
	Topologies []string
	// OnServers, if set, returns nil when the scenario's fault reaches the
	// lock on its servers as the topology declares them (decl), or why it
	// does not: a fault that waits out a server's own limit needs a server
	// whose declared settings have one.
	OnServers func(spec impls.Spec, decl topology.Declaration) error
	// Schedule names the nemesis's fixed schedule the scenario runs
	// (nemesis.Fixed), on the servers the schedule's faults need.
	Schedule string
	// Workload names what the scenario's clients do, a workload the
	// engine has. Alone, it is an in-process workload: clients that are
	// goroutines of one process, with no injected fault (contention,
	// release-hand-off, re-entry). Beside a Schedule, it is what every
	// worker process's section does under the schedule's faults, and the
	// figures read off the history after (coupon-sale: each section sells
	// from a stock); empty there, the plain read-work-write.
	Workload string
	// Risk says when the scenario's fault puts the lock at risk, the rule
	// the checker reads each run's danger window by (checker.Risk): at the
	// strike, for a fault that replaces or loses the servers' state; when
	// the holder's lease would run out, for one that only stops or slows
	// the holder; after the strike, for one that asks whether the lock
	// frees; the contention itself, with no fault. A safe run whose fault
	// never put the lock at risk is not exercised, and every scenario
	// declares its rule (a test holds them to it).
	Risk checker.Risk
	// Demo marks a scenario kept for a lesson's figure but left out of the
	// verdict matrix, because its verdicts repeat another scenario's.
	Demo bool
	// Alone marks a scenario whose fault must land within tens of
	// milliseconds (a server restarted or failed over while a holder waits
	// half a TTL for another client's read, a queued waiter struck half a
	// TTL before the release): the matrix runs its cells with no other
	// cell beside them. With one beside it on a loaded machine, a restart
	// of redis-fair's server took 0.6 s instead of 20-30 ms, no client got
	// in within the half TTL, and a cell expected unsafe came out safe.
	// Client faults that last 2.5 TTLs and more do not need it. The text
	// says why this scenario cannot share the machine; the matrix records
	// it on each of its cells (record.Cell.Alone).
	Alone string
}

// RunsAlone says whether cell c must run with no other cell beside it: its
// scenario is Alone, or its topology is (topology.Named.Alone: an ensemble
// whose start and elections take both cores of a small machine for
// seconds, or a server whose idle timeout a keep-alive delayed by another
// cell would miss).
func RunsAlone(c Cell) bool { return AloneBecause(c) != "" }

// AloneBecause says why cell c runs with no other cell beside it (its
// scenario's reason first, else its topology's), or "" when it shares the
// machine. A cell naming no known scenario or topology runs alone, as the
// cautious choice.
func AloneBecause(c Cell) string {
	s, err := Lookup(c.Scenario)
	if err != nil {
		return "unknown scenario " + c.Scenario
	}
	if s.Alone != "" {
		return c.Scenario + ": " + s.Alone
	}
	t, err := topology.Lookup(c.Topology)
	if err != nil {
		return "unknown topology " + c.Topology
	}
	if t.Alone != "" {
		return c.Topology + ": " + t.Alone
	}
	return ""
}

// AloneLast orders the positions of cells for running side by side: every
// cell that shares the machine first, in list order, then the ones that
// run alone (RunsAlone), in list order. An alone cell waits for every cell
// beside it to end, so one met between shared cells left a slot idle for
// the rest of the longest cell running (in the single topology's matrix,
// 65 alone cells among 422: about 150 s of its hour, simulated from the
// committed cells' seconds); run after them, they wait once.
func AloneLast(cells []Cell) []int {
	var shared, alone []int
	for i, c := range cells {
		if RunsAlone(c) {
			alone = append(alone, i)
		} else {
			shared = append(shared, i)
		}
	}
	return append(shared, alone...)
}

// alone marks s to run with no other cell beside it, for the reason why
// (Scenario.Alone).
func alone(why string, s Scenario) Scenario {
	s.Alone = why
	return s
}

var (
	regMu sync.Mutex
	reg   = map[string]Scenario{}
)

// Register adds a scenario, which names a schedule, a workload, or both
// for the engine to run.
func Register(s Scenario) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := reg[s.Name]; dup {
		panic("scenarios: duplicate scenario " + s.Name)
	}
	if s.Schedule == "" && s.Workload == "" {
		panic(fmt.Sprintf("scenarios: %s names neither a schedule nor a workload", s.Name))
	}
	reg[s.Name] = s
}

// Lookup finds a scenario; the error lists the valid names.
func Lookup(name string) (Scenario, error) {
	regMu.Lock()
	s, ok := reg[name]
	regMu.Unlock()
	if !ok {
		return Scenario{}, fmt.Errorf("unknown scenario %q; valid names: %s", name, strings.Join(Names(), ", "))
	}
	return s, nil
}

// All returns every scenario by name.
func All() []Scenario {
	regMu.Lock()
	out := make([]Scenario, 0, len(reg))
	for _, s := range reg {
		out = append(out, s)
	}
	regMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns every scenario name.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return names
}

// RunsOn reports whether the scenario is defined on the named topology.
func (s Scenario) RunsOn(topo string) bool {
	if len(s.Topologies) == 0 {
		return topology.Or(topo) == topology.SingleName
	}
	return slices.Contains(s.Topologies, topology.Or(topo))
}

// AppliesOn returns nil when the scenario can run against spec on the named
// topology (with fencing if asked), or the reason it cannot.
func (s Scenario) AppliesOn(spec impls.Spec, topo string, fencing bool) error {
	named, err := topology.Lookup(topo)
	if err != nil {
		return err
	}
	if !s.RunsOn(named.Name) {
		on := s.Topologies
		if len(on) == 0 {
			on = []string{topology.SingleName}
		}
		return fmt.Errorf("it runs on %s, not on %s", strings.Join(on, ", "), named.Name)
	}
	if !named.Carries(spec.Backend.Need()) {
		return fmt.Errorf("the %s topology cannot carry %s (%s)", named.Name, spec.Name, spec.Backend)
	}
	if decl, err := spec.Backend.On(named); err == nil {
		if err := cluster.Ensembles(decl); err != nil {
			return err
		}
		if s.OnServers != nil && !spec.Backend.InProcess {
			if err := s.OnServers(spec, decl); err != nil {
				return err
			}
		}
	}
	if s.Applies != nil {
		if err := s.Applies(spec, fencing); err != nil {
			return err
		}
	}
	if s.Schedule != "" {
		if err := scheduleApplies(s.Schedule, spec, named.Name); err != nil {
			return err
		}
	}
	return nil
}

// Why the scenarios that run alone do (Scenario.Alone), for those that
// share a reason. Each was measured: beside another cell on a loaded
// machine, the fault landed late enough to change the verdict.
const (
	// restartWhy: the first matrix to run cells side by side (fbb348ac).
	restartWhy = "the server must be back within tens of milliseconds, while the holder waits half a TTL for another client's read; " +
		"beside another cell, redis-fair's server restart took 0.6 s instead of 20-30 ms and a cell expected unsafe came out safe"
	redlockWhy = "a node of the holder's bare majority must restart, jump or be cut within tens of milliseconds of the holder's failpoint, " +
		"which another cell's load delays as it did the single server's restart (0.6 s instead of 20-30 ms)"
	queueWhy = "the queued waiter must be struck half a TTL before the release, within tens of milliseconds, " +
		"which another cell's load delays as it did a server's restart (0.6 s instead of 20-30 ms)"
	promotionWhy = "the holder must write within its lease right after the lab's own promotion; beside two cells the promotion took 2.7 s " +
		"where it takes about 0.55 s (mysql-optimistic on mysql-replica-semisync, unsafe in a matrix at 12a87be4)"
)
