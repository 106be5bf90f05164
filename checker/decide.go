package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	lin "github.com/locklab/locklab/linearizability"
)

// Minimum is the progress a run must make to be judged at all. A run below
// it is inconclusive, never safe: a lock that granted nothing after its
// fault has shown nothing.
type Minimum struct {
	Sections         int // critical sections checked
	GrantsAfterFault int // grants after the first fault began
}

// DefaultMinimum applies to every scenario and to explore.
var DefaultMinimum = Minimum{Sections: 20, GrantsAfterFault: 5}

// Input is one run's record.
type Input struct {
	Events []lin.Event
	TTL    time.Duration
	End    int64 // monotonic ns when recording stopped; 0: the last event
	// QuorumLoss lists windows in which a consistent lock is expected to
	// grant nothing (a majority of its nodes cut off).
	QuorumLoss []Window
	// Available lists windows in which the lock must keep granting (a
	// quorum stayed reachable); none there is as bad as stuck.
	Available []Window
	Minimum   Minimum
	// Reach names a fault that works only if the lock uses what it
	// disturbs (a skewed client clock); the run records lin.Reached events
	// counting the uses, and a run with none is not applicable.
	Reach   string
	Timeout time.Duration // porcupine's limit
	// Risk is the scenario's rule for when its fault puts the lock at
	// risk (scenarios.Scenario.Risk); RiskNotJudged leaves exercise out.
	Risk Risk
	// Claim is the lock's kind of hold on its servers, for RiskAtExpiry.
	Claim Claim
	// Holders are the clients the engine knew held the lock when the
	// fault struck (a schedule's holder at its failpoint); nil: read off
	// the fault and the history.
	Holders []int
}

// Decision is the verdict of one run and the figures it rests on.
type Decision struct {
	Verdict  Verdict
	Detail   string
	Sections int
	Unknown  int // sections whose outcome is unknown
	Liveness Liveness
	Result   lin.Result
	// Exercise is what the run shows of its fault's bite: the danger
	// windows and whether someone came for the lock inside one.
	Exercise Exercise
}

// Decide checks safety (porcupine) first, then liveness, then progress:
// a counterexample makes a run unsafe whatever else happened; a heal with
// no grant after it makes it stuck; too little progress makes it
// inconclusive; a quorum-loss window with no grant, followed by grants
// after the heal, makes it unavailable (the expected behaviour of a
// consistent lock); a run that would be safe is n/a when the fault could
// not take the lock from its holder (the danger window never opened: a
// claim with no expiry under a fault that only stops the holder), and not
// exercised when nobody came for the lock inside the window; otherwise it
// is safe.
func Decide(in Input) Decision {
	if in.Timeout <= 0 {
		in.Timeout = 2 * time.Minute
	}
	d0 := Exercised(in)
	// The windows go into the history porcupine's timeline draws, on a
	// copy: the caller's history stays as recorded.
	in.Events = slices.Clip(in.Events)
	for _, x := range d0.Exposures {
		if e, ok := x.Event(); ok {
			in.Events = append(in.Events, e)
		}
	}
	res := lin.Check(in.Events, in.Timeout)
	end := in.End
	if end == 0 && len(in.Events) > 0 {
		end = in.Events[len(in.Events)-1].Time
	}
	d := Decision{Sections: res.Ops, Unknown: res.Unknown, Result: res, Exercise: d0}
	d.Liveness = Progress(in.Events, in.TTL, end, in.QuorumLoss, in.Available)
	reached := int64(0)
	for _, e := range in.Events {
		if e.Kind == lin.Reached && e.Text == in.Reach {
			reached += e.Value
		}
	}
	switch {
	case res.Outcome == porcupine.Illegal:
		d.Verdict, d.Detail = Unsafe, "porcupine found no sequential order: two holders' sections overlapped"
	case d.Liveness.Stuck != "":
		d.Verdict, d.Detail = Stuck, fmt.Sprintf("no client was granted the lock within %v after %q", Bound(in.TTL), d.Liveness.Stuck)
	case in.Reach != "" && reached == 0:
		d.Verdict, d.Detail = NotApplicable, "the fault never reached the lock: no "+in.Reach+" in the whole run"
	case len(d.Liveness.Unserved) > 0:
		d.Verdict, d.Detail = Stuck, "no grants while "+strings.Join(d.Liveness.Unserved, ", ")+", though a quorum stayed reachable"
	case res.Outcome == porcupine.Unknown:
		d.Verdict, d.Detail = Unknown, fmt.Sprintf("porcupine gave up after %v", in.Timeout)
	case res.Ops < in.Minimum.Sections:
		d.Verdict, d.Detail = Inconclusive, fmt.Sprintf("%d sections checked, below the minimum of %d", res.Ops, in.Minimum.Sections)
	case d.Liveness.GrantsAfterFault < in.Minimum.GrantsAfterFault:
		d.Verdict, d.Detail = Inconclusive, fmt.Sprintf("%d grants after the fault, below the minimum of %d", d.Liveness.GrantsAfterFault, in.Minimum.GrantsAfterFault)
	case d.Liveness.Short != "":
		d.Verdict, d.Detail = Inconclusive, fmt.Sprintf("the run ended less than %v after %q healed, with no grant since", Bound(in.TTL), d.Liveness.Short)
	case len(d.Liveness.Unavailable) > 0:
		d.Verdict, d.Detail = Unavailable, "no grants while "+strings.Join(d.Liveness.Unavailable, ", ")+"; grants resumed after the heal"
	case d0.Judged && !d0.Opened:
		d.Verdict, d.Detail = NotApplicable, d0.Why
	case d0.Judged && !d0.Exercised:
		d.Verdict, d.Detail = NotExercised, d0.Why
	default:
		d.Verdict = Safe
	}
	return d
}
