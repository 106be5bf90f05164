package checker

import (
	"fmt"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// Bound is how long after a fault heals (or a holder dies) some client must
// be granted the lock before the run counts as stuck. It is one rule for
// every scenario and for explore: a lease or session frees within one TTL,
// a poller notices within another, and two seconds of slack cover process
// scheduling on a loaded 2-core machine.
func Bound(ttl time.Duration) time.Duration { return 3*ttl + 2*time.Second }

// AcquireBound is how long one client's acquire may wait before it gives
// up: well past Bound, so that a client never gives up before the checker
// has seen the whole bound pass without a grant, and a stuck lock is
// judged stuck from the history rather than by a client's timeout.
func AcquireBound(ttl time.Duration) time.Duration { return 5*ttl + 10*time.Second }

// Window is a span of a run in monotonic ns.
type Window struct {
	Name       string
	Start, End int64
}

// Heal is one fault's heal and what followed it.
type Heal struct {
	Fault string `json:"fault"`
	At    int64  `json:"at"`
	// Recovery is the time from the heal to the next grant, -1 if none
	// came within the bound, -2 if the run ended before the bound passed.
	Recovery time.Duration `json:"recovery_ns"`
}

// Liveness is what the history says about progress.
type Liveness struct {
	Heals            []Heal
	GrantsAfterFault int // grants after the first fault began (all grants if no fault)
	FirstFault       int64
	// Stuck names the first heal with no grant within the bound.
	Stuck string
	// StuckFault is that heal's fault: its index among the history's fault
	// events, in time order; -1 when no fault's heal is stuck (a run
	// without faults can be stuck too, between its grants).
	StuckFault int
	// Short names a heal too close to the run's end to judge.
	Short string
	// Unavailable names quorum-loss windows with no grant inside them
	// (expected of a consistent lock); Available those with grants.
	Unavailable []string
	Available   []string
	// Unserved names windows that should have had grants (a quorum stayed
	// reachable) but had none.
	Unserved []string
}

// Progress reads liveness off a merged history. end is when the run
// stopped recording (monotonic ns); a heal later than end-bound with no
// grant after it is too short to judge, not stuck.
func Progress(events []lin.Event, ttl time.Duration, end int64, quorumLoss, available []Window) Liveness {
	bound := int64(Bound(ttl))
	var grants []int64
	var faults []lin.Event
	for _, e := range events {
		switch e.Kind {
		case lin.Acquired:
			grants = append(grants, e.Time)
		case lin.Fault:
			faults = append(faults, e)
		}
	}
	l := Liveness{StuckFault: -1}
	for i, f := range faults {
		if i == 0 || f.Time < l.FirstFault {
			l.FirstFault = f.Time
		}
	}
	for _, g := range grants {
		if len(faults) == 0 || g > l.FirstFault {
			l.GrantsAfterFault++
		}
	}
	if len(faults) == 0 && len(events) > 0 {
		// A run without faults must still make progress: its start counts
		// as the one heal, and no gap between grants, nor from the last
		// grant to the run's end, may pass the bound.
		prev := events[0].Time
		for _, g := range grants {
			if g-prev > bound && l.Stuck == "" {
				l.Stuck = fmt.Sprintf("a gap of %v between grants", time.Duration(g-prev).Round(time.Millisecond))
			}
			prev = g
		}
		if len(grants) == 0 && end-events[0].Time > bound {
			l.Stuck = "the start of the run"
		}
		// Grants that stop for good are as stuck as a gap between two:
		// a client that waited on the lock until it gave up ends the run
		// long after the last grant, with none to close the gap.
		if len(grants) > 0 && end-prev > bound && l.Stuck == "" {
			l.Stuck = fmt.Sprintf("the last grant (the run went on for %v without another)", time.Duration(end-prev).Round(time.Millisecond))
		}
	}
	for _, w := range available {
		if grantsIn(grants, w) == 0 {
			l.Unserved = append(l.Unserved, w.Name)
		}
	}
	for i, f := range faults {
		at := f.Time
		if f.End > at {
			at = f.End
		}
		h := Heal{Fault: f.Text, At: at, Recovery: -1}
		for _, g := range grants {
			if g > at {
				if g-at <= bound {
					h.Recovery = time.Duration(g - at)
				}
				break
			}
		}
		if h.Recovery < 0 && at+bound > end {
			h.Recovery = -2
			if l.Short == "" {
				l.Short = f.Text
			}
		}
		if h.Recovery == -1 && l.Stuck == "" {
			l.Stuck, l.StuckFault = f.Text, i
		}
		l.Heals = append(l.Heals, h)
	}
	for _, w := range quorumLoss {
		if n := grantsIn(grants, w); n == 0 {
			l.Unavailable = append(l.Unavailable, w.Name)
		} else {
			l.Available = append(l.Available, fmt.Sprintf("%s (%d grants)", w.Name, n))
		}
	}
	return l
}

// grantsIn counts the grants stamped inside w.
func grantsIn(grants []int64, w Window) int {
	n := 0
	for _, g := range grants {
		if g >= w.Start && g <= w.End {
			n++
		}
	}
	return n
}
