package engine

import (
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// Options configure one run of a scenario.
type Options struct {
	Impl impls.Spec
	// Topology names the servers' topology (topology.Named); empty is the
	// single-server one.
	Topology string
	// Profile names the timeouts the run's servers start with
	// (topology.Profile); empty is the fast one. The TTL is the caller's:
	// the profile's own (Profile.TTL) or the -ttl it was given.
	Profile  string
	Fencing  bool
	Seed     int64
	Clients  int           // concurrent clients
	Sections int           // critical sections to run in total
	TTL      time.Duration // lease time / session timeout
	// OutDir receives the counterexample timeline when a run is unsafe.
	OutDir string
	// KeepHistory writes the run's history (HistorySuffix) to OutDir even
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
	o.Topology = topology.Or(o.Topology)
	o.Profile = topology.OrFast(o.Profile)
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
	Topology string
	Profile  string
	Fencing  bool
	Seed     int64
	Verdict  checker.Verdict
	// Clients is how many clients ran; Processes says whether each was a
	// worker process of its own (fault scenarios) or a goroutine.
	Clients   int
	Processes bool
	Sections  int // critical sections checked
	Unknown   int // of which with an unknown outcome
	// GrantsAfterFault counts grants after the first fault began (every
	// grant when the run has no fault): the progress a verdict rests on.
	GrantsAfterFault int
	// ExerciseJudged says whether the scenario's rule judged the run's
	// exercise (checker.Risk), and Exercised whether the fault put the
	// lock at risk while someone came for it; Exposures are the danger
	// windows that rests on.
	ExerciseJudged bool
	Exercised      bool
	Exposures      []checker.Exposure
	HTML           string // counterexample timeline, when unsafe
	History        string // the recorded history (JSON lines), when kept
	// Recovery is the time from a holder's crash until another client held
	// the lock (0 when the scenario has no crash).
	Recovery time.Duration
	Detail   string // one line on what happened
	Elapsed  time.Duration
	// Phases is where Elapsed went (see Phase), in order.
	Phases []Phase
	// Figures holds scenario-specific numbers (grants per partition phase,
	// coupons sold, ...), named in kebab-case.
	Figures map[string]float64
}
