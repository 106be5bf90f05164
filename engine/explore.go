package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	lin "github.com/locklab/locklab/linearizability"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
)

// ExploreOptions configure `bench explore`.
type ExploreOptions struct {
	Impl impls.Spec
	// Topology names the servers' topology (topology.Named; empty: single).
	Topology string
	Fencing  bool
	Seed     int64
	TTL      time.Duration
	Clients  int
	Duration time.Duration
	// Kinds restricts the fault kinds (default: every kind that applies).
	Kinds []string
	// Fixed names a fixed schedule (nemesis.Fixed) to run in place of a
	// generated one.
	Fixed string
	// Replays is how many times the shrinker replays each candidate; it
	// still fails if any replay fails.
	Replays int
	// ShrinkBudget bounds the time spent shrinking.
	ShrinkBudget time.Duration
	OutDir       string // where a counterexample is written
	Logf         func(string, ...any)
}

// Exploration is what `bench explore` found.
type Exploration struct {
	Schedule nemesis.Schedule  // the generated schedule
	Skipped  map[string]string // kinds that do not apply, and why
	Run      *ScheduleRun      // the exploring run
	// On a counterexample (unsafe or stuck): the minimal schedule that
	// still failed, its failing replay, what shrinking did, and the files
	// written.
	Minimal      *nemesis.Schedule
	MinimalRun   *ScheduleRun
	Shrink       nemesis.ShrinkStats
	ScheduleFile string
	HistoryFile  string
	HTMLFile     string
}

// Suspects returns the indices of the schedule's faults that a failing
// run's history points at, most likely first, for the shrinker to try
// alone: for stuck, the fault after whose heal no grant came; for unsafe,
// the last fault that began before the second holder of the first lost
// update entered (two sections that wrote the same value), then the one
// before it.
func Suspects(r *ScheduleRun) []int {
	var faults []lin.Event
	for _, e := range r.Events {
		if e.Kind == lin.Fault {
			faults = append(faults, e)
		}
	}
	// The runner records one fault event per step, in order.
	if len(faults) != len(r.Schedule.Faults) {
		return nil
	}
	switch v := r.Decision.Verdict; {
	case checker.LivenessViolated(v):
		if i := r.Decision.Liveness.StuckFault; i >= 0 {
			return []int{i}
		}
	case checker.SafetyViolated(v):
		type op struct{ call, ret int64 }
		calls := map[[2]int64]int64{} // (client, op) -> call time
		written := map[int64]op{}     // value written -> first section that wrote it
		lost := int64(-1)
		for _, e := range r.Events {
			switch {
			case e.Kind == lin.Call:
				calls[[2]int64{int64(e.Client), e.Op}] = e.Time
			case e.Kind == lin.Return && e.Status == lin.OK:
				this := op{calls[[2]int64{int64(e.Client), e.Op}], e.Time}
				if prev, dup := written[e.Value]; dup {
					// The later of the two entries is when the lock let a
					// second holder in: the fault came before it.
					t := max(prev.call, this.call)
					if lost < 0 || t < lost {
						lost = t
					}
					continue
				}
				written[e.Value] = this
			}
		}
		if lost < 0 {
			return nil
		}
		var out []int
		for i := len(faults) - 1; i >= 0 && len(out) < 2; i-- {
			if faults[i].Time <= lost {
				out = append(out, i)
			}
		}
		return out
	}
	return nil
}

// ErrNoKind is PlanExplore's error when none of the kinds asked for can
// reach the lock: `bench explore -impl all` skips such a lock, saying why.
var ErrNoKind = errors.New("no fault kind asked for applies")

// ErrNoFencing is PlanExplore's error for a fenced exploration of a lock
// that issues no fencing tokens: a fenced table skips it, saying why.
var ErrNoFencing = errors.New("issues no fencing tokens, so -fencing cannot apply")

// PlanExplore draws the schedule an exploration would run, with the kinds
// it skipped and why; it starts nothing.
func PlanExplore(o ExploreOptions) (nemesis.Schedule, map[string]string, error) {
	if o.Clients <= 0 {
		o.Clients = 4
	}
	topo, err := nemesis.ExploreTopology(o.Impl, o.Topology, o.Clients, o.Kinds)
	if err != nil {
		return nemesis.Schedule{}, nil, err
	}
	ks, skipped, err := nemesis.Applicable(o.Impl, topo, o.Kinds)
	if err != nil {
		return nemesis.Schedule{}, nil, err
	}
	if o.Impl.Backend.InProcess {
		return nemesis.Schedule{}, skipped, fmt.Errorf("%s cannot be explored: its %v", o.Impl.Name, ErrInProcess)
	}
	if o.Fencing && !o.Impl.Caps.Fencing {
		return nemesis.Schedule{}, skipped, fmt.Errorf("%s %w", o.Impl.Name, ErrNoFencing)
	}
	if o.Fixed != "" {
		f, ok := nemesis.Fixed[o.Fixed]
		if !ok {
			return nemesis.Schedule{}, skipped, fmt.Errorf("unknown fixed schedule %q; valid: %v", o.Fixed, nemesis.FixedNames())
		}
		s := f(o.Impl.Name, o.Fencing, o.TTL, checker.Bound(o.TTL))
		s.Seed, s.Clients, s.Topology = o.Seed, o.Clients, topo.Name
		return s, skipped, s.Validate()
	}
	if len(ks) == 0 {
		var why []string
		for _, k := range slices.Sorted(maps.Keys(skipped)) {
			why = append(why, k+": "+skipped[k])
		}
		return nemesis.Schedule{}, skipped, fmt.Errorf("%w to %s (%s)", ErrNoKind, o.Impl.Name, strings.Join(why, "; "))
	}
	s := nemesis.Generate(nemesis.Plan{Seed: o.Seed, Impl: o.Impl.Name, Fencing: o.Fencing, TTL: o.TTL, Bound: checker.Bound(o.TTL),
		Clients: o.Clients, Duration: o.Duration, Topology: topo, Kinds: ks})
	s.Topology = topo.Name
	return s, skipped, nil
}

// Explore draws a schedule from the seed, runs it, and on a counterexample
// shrinks it to a minimal schedule that still fails, written with the
// history and timeline of its failing replay.
func Explore(ctx context.Context, o ExploreOptions) (*Exploration, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Replays <= 0 {
		o.Replays = 3
	}
	s, skipped, err := PlanExplore(o)
	if err != nil {
		return nil, err
	}
	x := &Exploration{Schedule: s, Skipped: skipped}
	o.Logf("exploring %s for %v with %d faults (seed %d)", s.Impl, time.Duration(s.Duration), len(s.Faults), s.Seed)
	if x.Run, err = RunSchedule(ctx, s, o.Logf); err != nil {
		return nil, err
	}
	class := x.Run.Decision.Verdict
	if !checker.Failed(class) {
		return x, nil
	}
	o.Logf("%s: %s; shrinking (at most %v, %d replays per candidate)", class, x.Run.Decision.Detail, o.ShrinkBudget, o.Replays)
	failing := x.Run
	bound := checker.Bound(o.TTL)
	minimal, st, err := nemesis.Shrink(ctx, s, bound, o.ShrinkBudget, Suspects(x.Run), func(ctx context.Context, c nemesis.Schedule) (bool, error) {
		for i := 0; i < o.Replays; i++ {
			r, err := RunSchedule(ctx, c, nil)
			if errors.Is(err, nemesis.ErrNotNow) {
				// A step that cannot strike when its moment comes is
				// skipped inside the run (scheduleRun.notStruck); what
				// still ends a candidate so is a settle before the
				// faults that finds the servers not in the state it
				// needs (a lag kind's master with no replica online):
				// the candidate does not reproduce, and the search goes
				// on without it.
				o.Logf("candidate of %d faults: cannot strike: %v", len(c.Faults), err)
				return false, nil
			}
			if err != nil {
				return false, err
			}
			o.Logf("candidate of %d faults, %v: replay %d %s", len(c.Faults), time.Duration(c.Duration).Round(time.Second), i+1, r.Decision.Verdict)
			if checker.Reproduced(class, r.Decision.Verdict) {
				failing = r
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("shrink: %w", err)
	}
	minimal.Verdict = string(class)
	x.Minimal, x.Shrink = &minimal, st
	// The run that failed last is the minimal schedule's (or, if no
	// candidate failed, the original's).
	x.MinimalRun = failing
	if err := x.write(o.OutDir); err != nil {
		return nil, err
	}
	return x, nil
}

// write saves the minimal schedule, the history of its failing replay and
// porcupine's timeline (whose faults row is the schedule's).
func (x *Exploration) write(dir string) error {
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "locklab", "explore")
	}
	name := x.Minimal.Impl
	if x.Minimal.Fencing {
		name += "-fenced"
	}
	if x.Minimal.Name != "" {
		name += "-" + x.Minimal.Name
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed%d", name, x.Minimal.Seed))
	var err error
	if x.ScheduleFile, x.HistoryFile, x.HTMLFile, err = WriteCounterexample(base, *x.Minimal, x.MinimalRun); err != nil {
		return err
	}
	return nil
}

// HistorySuffix ends the name of every history a run keeps: JSON lines,
// gzipped (lin.ReadEventsFile reads it), so results/ stays light.
const HistorySuffix = ".history.jsonl" + lin.CompressedSuffix

// WriteCounterexample writes base.schedule.json, base's history
// (HistorySuffix) and, for an unsafe or stuck run, porcupine's timeline
// base.html; it returns their paths.
func WriteCounterexample(base string, s nemesis.Schedule, r *ScheduleRun) (sched, hist, html string, err error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", "", "", err
	}
	sched = base + ".schedule.json"
	if err := s.Write(sched); err != nil {
		return "", "", "", err
	}
	hist = base + HistorySuffix
	if err := lin.WriteEvents(hist, r.Events); err != nil {
		return "", "", "", err
	}
	// A stuck run's timeline shows it too: the faults row, then no grant.
	if checker.Failed(r.Decision.Verdict) {
		if html, err = r.Decision.Result.WriteHTML(base + ".html"); err != nil {
			return "", "", "", err
		}
	}
	return sched, hist, html, nil
}
