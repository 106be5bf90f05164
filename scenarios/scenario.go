// Package scenarios holds the workloads and fault schedules the lab runs
// against each lock, the verdict each one reaches, and the runner that
// starts servers, drives clients, checks the history and writes the
// counterexample.
package scenarios

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
)

// Verdict is what the checker concluded; scenarios only record, and
// package checker decides (checker.Decide).
type Verdict = checker.Verdict

// The verdicts, named here too so that scenario code and its readers need
// not import the checker for them.
const (
	Safe          = checker.Safe
	Unsafe        = checker.Unsafe
	Stuck         = checker.Stuck
	Unavailable   = checker.Unavailable
	Inconclusive  = checker.Inconclusive
	Unknown       = checker.Unknown
	NotApplicable = checker.NotApplicable
)

// Options configure one run of a scenario.
type Options struct {
	Impl     impls.Spec
	Fencing  bool
	Seed     int64
	Clients  int           // concurrent clients
	Sections int           // critical sections to run in total
	TTL      time.Duration // lease time / session timeout
	// OutDir receives the counterexample timeline when a run is unsafe.
	OutDir string
	// KeepHistory writes the run's history (JSON lines) to OutDir even
	// when the run is safe; an unsafe run always keeps it.
	KeepHistory bool
	// External points the run at servers the user runs.
	External cluster.External
	// CheckTimeout bounds porcupine; past it the verdict is unknown.
	CheckTimeout time.Duration
	// Logf reports progress (may be nil).
	Logf func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.Clients <= 0 {
		o.Clients = 8
	}
	if o.Sections <= 0 {
		o.Sections = 2000
	}
	if o.TTL <= 0 {
		o.TTL = 2 * time.Second
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 2 * time.Minute
	}
	if o.Seed == 0 {
		o.Seed = time.Now().UnixNano()
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// Outcome is the result of one run.
type Outcome struct {
	Scenario string
	Impl     string
	Fencing  bool
	Seed     int64
	Verdict  Verdict
	// Clients is how many clients ran; Processes says whether each was a
	// worker process of its own (fault scenarios) or a goroutine.
	Clients   int
	Processes bool
	Sections  int // critical sections checked
	Unknown   int // of which with an unknown outcome
	// GrantsAfterFault counts grants after the first fault began (every
	// grant when the run has no fault): the progress a verdict rests on.
	GrantsAfterFault int
	HTML             string // counterexample timeline, when unsafe
	History          string // the recorded history (JSON lines), when kept
	// Recovery is the time from a holder's crash until another client held
	// the lock (0 when the scenario has no crash).
	Recovery time.Duration
	Detail   string // one line on what happened
	Elapsed  time.Duration
	// Figures holds scenario-specific numbers (grants per partition phase,
	// coupons sold, ...), named in kebab-case.
	Figures map[string]float64
}

// Scenario is a workload with its faults.
type Scenario struct {
	Name    string
	Summary string
	// Applies returns nil when the scenario can run against spec (with
	// fencing if asked), or the reason it cannot.
	Applies func(spec impls.Spec, fencing bool) error
	// Needs returns the servers beyond the lock's own and the resource.
	Needs func(spec impls.Spec) cluster.Needs
	Run   func(ctx context.Context, env *Env) (*Outcome, error)
	// Schedule names the nemesis's fixed schedule the scenario runs
	// (nemesis.Fixed); empty for one still scripted in this package.
	Schedule string
	// Demo marks a scenario kept for a lesson's figure but left out of the
	// verdict matrix, because its verdicts repeat another scenario's.
	Demo bool
}

var (
	regMu sync.Mutex
	reg   = map[string]Scenario{}
)

// Register adds a scenario.
func Register(s Scenario) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := reg[s.Name]; dup {
		panic("scenarios: duplicate scenario " + s.Name)
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
