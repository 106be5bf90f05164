package checker

import (
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// RiskBothSides: the fault splits the servers into two sides that can each
// grant (the old master, alive, with some clients; the rest of its group,
// which promotes a replica, with the others), and the risk is the two
// masters granting at once. Its fault record names the old side's clients
// (lin.Injection.Clients). A run exercised it when, inside the split, a
// client of the old side asked for the lock (granted or refused) or acted
// on the resource after a client of the other side had been granted the
// lock there: both sides came for it while both could answer. A setting
// that stops the old master's writes (min-replicas-to-write) is then
// tested, not spared: its clients were refused, and the run counts.
const RiskBothSides Risk = lin.RiskBothSides

// SplitSides is what one split's two sides did inside it, read off the
// history: the grants each side's clients were given while the cut was
// whole (lin.Injection.Whole to Healing; the fault's start and end in an
// older history), and when, counted from the strike.
type SplitSides struct {
	Fault int   // the fault's index among the history's fault events
	Old   []int // the old side's clients (the rest are the other side's)
	// OldGrants and NewGrants count the grants to each side's clients
	// inside the split.
	OldGrants, NewGrants int
	// OldLast is when the old side's last grant inside the split came, and
	// NewFirst the other side's first, from the strike; -1: none.
	OldLast, NewFirst time.Duration
	// OldAfterNew counts the old side's acts after NewFirst inside the
	// split: acquires asked or still waiting then (granted, refused, or
	// answered only after the heal began), reads and writes of the
	// resource.
	OldAfterNew int
}

// SplitsOf reads the sides of every fault of the history whose record
// names two clients or more (a split that took them to the old master's
// side), in time order; a fault that names fewer splits no clients.
func SplitsOf(events []lin.Event) []SplitSides {
	var out []SplitSides
	fi := 0
	for _, f := range events {
		if f.Kind != lin.Fault {
			continue
		}
		if f.Injection != nil && len(f.Injection.Clients) >= 2 {
			out = append(out, sidesOf(events, f, fi))
		}
		fi++
	}
	return out
}

// sidesOf is SplitsOf for fault f, the fi-th.
func sidesOf(events []lin.Event, f lin.Event, fi int) SplitSides {
	s := SplitSides{Fault: fi, Old: f.Injection.Clients, OldLast: -1, NewFirst: -1}
	old := map[int]bool{}
	for _, c := range s.Old {
		old[c] = true
	}
	// From when the cut was whole: before that, a client of the majority
	// side could still be granted by the old master.
	from := f.Time
	if f.Injection.Whole > f.Time {
		from = f.Injection.Whole
	}
	// To when the heal began: while it runs, host by host, the old side's
	// clients can reach the sentinels and the new master too.
	to := f.End
	if h := f.Injection.Healing; h > from && h < to {
		to = h
	}
	inside := func(t int64) bool { return t >= from && t <= to }
	var newFirst int64
	for _, e := range events {
		if e.Kind != lin.Acquired || !inside(e.Time) {
			continue
		}
		if old[e.Client] {
			s.OldGrants++
			s.OldLast = time.Duration(e.Time - f.Time)
			continue
		}
		s.NewGrants++
		if newFirst == 0 {
			newFirst, s.NewFirst = e.Time, time.Duration(e.Time-f.Time)
		}
	}
	if newFirst == 0 {
		return s
	}
	for _, e := range events {
		if !old[e.Client] {
			continue
		}
		switch e.Kind {
		case lin.Acquired, lin.AcquireFailed:
			// Asked, or still waiting, once the other side had a grant:
			// an acquire counts when it was pending at some moment
			// between that grant and the heal, even if it was asked
			// before and answered only after the heal began (a waiter
			// queued on the old server behind a session whose client is
			// on the other side, which the old server granted after the
			// cut and which never releases).
			asked := askedAt(e)
			if asked <= to && e.Time >= newFirst {
				s.OldAfterNew++
			}
		case lin.Call, lin.Read, lin.Return:
			if inside(e.Time) && e.Time >= newFirst {
				s.OldAfterNew++
			}
		}
	}
	return s
}

// bothSidesExercised judges a run by RiskBothSides.
func bothSidesExercised(events []lin.Event) Exercise {
	ex := Exercise{Judged: true, Opened: true}
	splits := SplitsOf(events)
	switch {
	case len(splits) == 0:
		ex.Why = "the run recorded no split with clients on the old side"
		return ex
	}
	for _, s := range splits {
		if s.NewFirst >= 0 && s.OldAfterNew > 0 {
			ex.Exercised = true
			return ex
		}
	}
	if splits[0].NewFirst < 0 {
		ex.Why = "the majority side granted nothing inside the split"
	} else {
		ex.Why = "no client of the old side came for the lock after the majority side's first grant inside the split"
	}
	return ex
}
