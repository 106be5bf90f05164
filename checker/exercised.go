package checker

import (
	"fmt"
	"math"
	"strings"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// A safe verdict is read as "this lock survives this fault". It can only
// mean that when the fault put the lock at risk and someone came for the
// lock while it did: Jepsen's rule, a test that could not have failed
// proves nothing. The danger window of a run is the span in which the
// faulted holder's claim was no longer protected by the servers while the
// holder still acted under it; a run exercised its fault when another
// client tried to take the lock, or acted on the resource, inside it.

// Risk is a scenario's rule for when its fault takes the servers'
// protection from the faulted holder's claim (scenarios.Scenario.Risk).
type Risk string

const (
	// RiskNotJudged: the run's exercise is not judged (a schedule whose
	// fault kinds declare no rule yet, such as explore's); its verdict
	// stands as Decide reaches it otherwise.
	RiskNotJudged Risk = ""
	// RiskContention: no fault; the risk is the contention itself, which
	// was there when at least two clients acted on the resource.
	RiskContention Risk = lin.RiskContention
	// RiskAtStrike: the fault replaces or loses the servers' state (a
	// fail-over, a server restarted empty, the holder's session ended by
	// the server, a quorum or a leader cut off): protection ends when it
	// strikes.
	RiskAtStrike Risk = lin.RiskAtStrike
	// RiskAtPromotion: the fault kills a master or primary and puts a
	// replica in its place (a Sentinel group's or a Redis Cluster's
	// fail-over, the lab's own promotion of a database replica). The
	// claim is lost at the strike only when the promoted replica lacked
	// what the master had written by then, the holder's grant and fencing
	// increment among it: read from the servers' replication positions,
	// which the fault records (lin.Injection.Promotion), never assumed.
	// A promoted replica that had everything holds the claim as the
	// master did, and the fail-over put nothing at risk.
	RiskAtPromotion Risk = lin.RiskAtPromotion
	// RiskAtExpiry: the fault leaves the servers alone and stops or slows
	// the holder (a pause, the holder cut off its servers, a late release,
	// a slow section): protection ends when the holder's lease runs out on
	// the servers, one TTL after its grant (after the strike, for a lock
	// that renews its lease, whose last renewal came before it), or when
	// another client is granted the lock while the holder still holds it.
	// A lock whose claim has no expiry (it lives as long as its session)
	// never loses it so: the window never opens and the run is n/a.
	RiskAtExpiry Risk = lin.RiskAtExpiry
	// RiskRecovery: the fault asks whether the lock frees for others (a
	// holder or a queued waiter crashed or paused, a hand-off); it
	// exercised when another client was granted the lock after the strike.
	RiskRecovery Risk = lin.RiskRecovery
)

// Claim is what a lock's hold on the servers is, as its capabilities
// declare it (impls.Capabilities): whether it expires on the servers one
// TTL after it was last granted or renewed, and whether the holder renews
// it while it lives.
type Claim struct {
	Expires bool // impls.Capabilities.Expiry
	Renews  bool // impls.Capabilities.Renewal
	// Lease is how long the claim lasts on the servers unrenewed; 0: the
	// run's TTL. A session claim on a server that ends idle sessions
	// expires after the idle time, renewed by every request on it.
	Lease time.Duration
}

// Exposure is one fault's danger window in a run, and what happened in it.
type Exposure struct {
	Fault  int   // the fault's index among the history's fault events, in time order
	Holder int   // the client whose claim the fault put at risk; -1: none held the lock
	Grant  int64 // when that claim was granted
	// Start and End bound the window: from when the servers stopped
	// protecting the claim to the holder's last act under it. Opened is
	// false when the window never opened (Start is then 0, or not before
	// End): the claim was protected until the holder's last act.
	Start, End int64
	Opened     bool
	// Others counts the other clients' acts inside the window: acquires
	// granted, refused or waiting (not those that failed on the servers
	// or ended unknown: cameForTheLock), reads and writes of the resource.
	Others int
	// Rule says in words what opened the window (or why it did not).
	Rule string
}

// Exercised reports whether the window opened and someone came for the
// lock inside it.
func (x Exposure) Exercised() bool { return x.Opened && x.Others > 0 }

// Event is the exposure as a history record (lin.Danger), for the saved
// history and the timeline; a window that never opened has none.
func (x Exposure) Event() (lin.Event, bool) {
	if !x.Opened {
		return lin.Event{}, false
	}
	return lin.Event{Kind: lin.Danger, Time: x.Start, End: x.End, Client: x.Holder, Value: int64(x.Others), Text: x.Rule}, true
}

// Exposures reads the danger window of each fault off a history, by the
// scenario's rule. holders are the clients the engine knew to hold the
// lock when the fault struck (a schedule's holder stopped at its
// failpoint); nil: the fault's own struck clients, else whoever held the
// lock at the strike. A rule of RiskNotJudged, RiskContention or
// RiskRecovery has no holder's claim to expose and returns nil.
func Exposures(events []lin.Event, risk Risk, claim Claim, ttl time.Duration, holders []int) []Exposure {
	if risk != RiskAtStrike && risk != RiskAtExpiry && risk != RiskAtPromotion {
		return nil
	}
	var out []Exposure
	fi := 0
	for _, f := range events {
		if f.Kind != lin.Fault {
			continue
		}
		out = append(out, exposure(events, f, fi, risk, claim, ttl, holders))
		fi++
	}
	return out
}

// claimSpan is one grant of the lock to one client and its last act on
// the resource under it.
type claimSpan struct {
	client      int
	grant, last int64
	work        int64 // its last read or write of the resource (no later than last)
	// straddled: the grant's acquire was asked before the strike and
	// returned after it (a holder stopped between its SET and its WAIT):
	// the servers had granted the claim when the fault struck, though the
	// history records the grant only when the acquire returned.
	straddled bool
}

// exposure is the danger window of fault f (the fi-th).
func exposure(events []lin.Event, f lin.Event, fi int, risk Risk, claim Claim, ttl time.Duration, holders []int) Exposure {
	x := Exposure{Fault: fi, Holder: -1}
	struck := holders
	if struck == nil && f.Injection != nil {
		struck = f.Injection.Clients
	}
	c, ok := claimAt(events, f.Time, struck)
	if !ok {
		x.Rule = "no client held the lock when the fault struck"
		return x
	}
	x.Holder, x.Grant, x.End = c.client, c.grant, c.last
	lease := ttl
	if claim.Lease > 0 {
		lease = claim.Lease
	}
	var promoted promotion
	tookNothing := false
	if risk == RiskAtPromotion {
		promoted, tookNothing = promotionStart(f, c)
	}
	// Another client granted the lock while the holder still worked
	// under it is the servers' own word that its claim was no longer
	// protected, except after a fail-over that took nothing from the
	// claim: a second grant in the holder's section then came from its
	// lease running out while the schedule kept it stopped, which
	// pause-past-ttl asks about; counting it would call the fail-over
	// exercised although replication had carried everything first (issue
	// 44: the fenced Redis locks on Sentinel and Redis Cluster
	// fail-overs, safe 3 of 3 with nothing lost).
	other := int64(0)
	if !tookNothing {
		other = otherGrant(events, c)
	}
	switch {
	case risk == RiskAtStrike && c.straddled:
		// From the strike, not from the recorded grant: counting from
		// the acquire's return left only the holder's own write in the
		// window, and a fenced WAIT lock whose next holder was granted
		// on the promoted master inside the cut, and whose write the
		// resource refused, was called not exercised
		// (redis-setnx-px-wait@redis-sentinel-min-replicas/
		// sentinel-split-after-ack, fenced: 5 of 5 at seed 1).
		x.Start, x.Rule = f.Time, "the fault struck the servers holding the claim, granted before the strike and confirmed after it"
	case risk == RiskAtStrike:
		x.Start, x.Rule = max(f.Time, c.grant), "the fault struck the servers holding the claim"
	case risk == RiskAtPromotion:
		x.Start, x.Rule = promoted.start, promoted.rule
	case claim.Expires && claim.Renews:
		x.Start, x.Rule = max(f.Time, c.grant)+int64(lease), fmt.Sprintf("the lease ran out %v after the strike, with no renewal since", lease)
	case claim.Expires:
		x.Start, x.Rule = c.grant+int64(lease), fmt.Sprintf("the lease ran out %v after the grant", lease)
	default:
		x.Rule = "the claim has no expiry: it lasts as long as the holder's session"
	}
	if other != 0 && (x.Start == 0 || other < x.Start) {
		x.Start, x.Rule = other, fmt.Sprintf("another client was granted the lock while client %d held it", c.client)
	}
	x.Opened = x.Start != 0 && x.Start < x.End
	if !x.Opened {
		if x.Start != 0 {
			x.Rule += ", after the holder's last act"
		}
		return x
	}
	for _, e := range events {
		if e.Client == c.client {
			continue
		}
		switch e.Kind {
		case lin.Acquired, lin.AcquireFailed:
			if !cameForTheLock(e) {
				continue
			}
			// An acquire counts from when it was asked: one waiting in
			// the lock's queue through the window was trying to take it.
			asked := askedAt(e)
			if asked <= x.End && e.Time >= x.Start {
				x.Others++
			}
		case lin.Call, lin.Read, lin.Return:
			if e.Time >= x.Start && e.Time <= x.End {
				x.Others++
			}
		}
	}
	return x
}

// askedAt is when an acquire's event was asked for: its Asked, or its
// own time where none was recorded (an acquire is pending from one to
// the other).
func askedAt(e lin.Event) int64 {
	if e.Asked == 0 || e.Asked > e.Time {
		return e.Time
	}
	return e.Asked
}

// cameForTheLock says whether an acquire met the lock: granted, refused
// because it was held, or waited for it. One that failed on the servers
// (a backend error: a server down or refusing) or whose outcome is
// unknown (its connection cut, as a killed server's) never met the lock,
// so it put nothing to the test: a container restarted slowly under load
// had a holder write alone past its hold-up while the others' acquires
// all ended "outcome unknown: EOF", and the run was called safe,
// exercised, on those alone.
func cameForTheLock(e lin.Event) bool {
	if e.Kind != lin.AcquireFailed {
		return true
	}
	return !strings.HasPrefix(e.Text, lin.FailedUnknown) && !strings.HasPrefix(e.Text, lin.FailedBackend)
}

// otherGrant is when another client was granted the lock while c's holder
// still worked under it, or 0. Only before the holder's last act on the
// resource: a grant after it may be its own release handing the lock on,
// before the holder recorded that the release returned.
func otherGrant(events []lin.Event, c claimSpan) int64 {
	for _, e := range events {
		if e.Kind == lin.Acquired && e.Client != c.client && e.Time > c.grant && e.Time <= c.work {
			return e.Time
		}
	}
	return 0
}

// promotion is where a fail-over's window starts (0: it never opens) and
// why.
type promotion struct {
	start int64
	rule  string
}

// promotionStart reads fault f's promotion record against claim c. The
// master's position was read at the strike, which came after the
// holder's grant was written (the schedules strike inside the holder's
// section, or right after its acquire's write): a promoted replica behind
// that position lacked the last writes before the strike, and so the
// grant or the fencing increment that followed it, or both, as far as
// the positions can tell (the grant's own position is not recorded; a
// write after it, such as a replication ping, would count too, which
// only ever calls a run exercised that replication had carried). A
// promoted replica at or past it had them. tookNothing is true only when
// the record says the promoted replica had everything.
func promotionStart(f lin.Event, c claimSpan) (p promotion, tookNothing bool) {
	if f.Injection == nil || f.Injection.Promotion == nil {
		return promotion{rule: "the fault recorded no promotion, so what the promoted server had is unknown"}, false
	}
	rec := *f.Injection.Promotion
	switch {
	case !rec.Known():
		return promotion{rule: "what the promoted server had is unknown (" + rec.String() + ")"}, false
	case rec.Lacked():
		return promotion{start: max(f.Time, c.grant), rule: fmt.Sprintf(
			"the promoted replica %s lacked the last %d %s %s had written by the strike, after client %d's grant (%s against %s)",
			rec.Promoted, rec.Behind, rec.Unit, rec.Master, c.client, rec.PromotedAt, rec.MasterAt)}, false
	}
	return promotion{rule: fmt.Sprintf(
		"the promoted replica %s had all %s had written by the strike, client %d's grant among it (%s against %s): the fail-over took nothing from the claim",
		rec.Promoted, rec.Master, c.client, rec.PromotedAt, rec.MasterAt)}, true
}

// claimAt finds the claim a fault striking at t put at risk: among the
// struck clients (any client when none is named), the one whose grant
// was still in force at t; failing that, a struck client's first grant
// after t (a fault struck at the grant lands before the client records
// it). ok is false when there is none.
func claimAt(events []lin.Event, t int64, struck []int) (claimSpan, bool) {
	named := func(c int) bool {
		if len(struck) == 0 {
			return true
		}
		for _, s := range struck {
			if s == c {
				return true
			}
		}
		return false
	}
	held := grantsInForce(events, t)
	var c claimSpan
	found := false
	for client, g := range held {
		if named(client) && (!found || g > c.grant) {
			c, found = claimSpan{client: client, grant: g}, true
		}
	}
	if !found && len(struck) > 0 {
		for _, e := range events {
			if e.Time <= t || !named(e.Client) {
				continue
			}
			if e.Kind == lin.Acquired {
				c, found = claimSpan{client: e.Client, grant: e.Time, straddled: e.Asked != 0 && e.Asked <= t}, true
				break
			}
			if e.Kind == lin.AcquireFailed && e.Asked != 0 && e.Asked <= t {
				// Struck inside its acquire, which then gave the grant
				// back (a WAIT for replicas that found them gone): the
				// claim was being made when the fault struck, and was at
				// risk until the acquire ended.
				return claimSpan{client: e.Client, grant: e.Asked, last: e.Time, work: e.Time}, true
			}
		}
	}
	if !found {
		return claimSpan{}, false
	}
	c.last, c.work = c.grant, c.grant
	for _, e := range events {
		if e.Client != c.client || e.Time <= c.grant {
			continue
		}
		if e.Kind == lin.Acquired {
			break // its next claim
		}
		switch e.Kind {
		case lin.Call, lin.Read, lin.Return:
			c.last, c.work = e.Time, e.Time
		case lin.Released:
			c.last = e.Time
		}
	}
	return c, true
}

// Contended reports whether at least two clients acted on the resource:
// the risk of a run with no fault, that the lock kept apart clients who
// were there to be kept apart.
func Contended(events []lin.Event) bool {
	return contendedDuring(events, math.MinInt64, math.MaxInt64)
}

// Recovered reports whether another client than the struck ones was
// granted the lock after a fault struck: a fault that asks whether the
// lock frees was answered.
func Recovered(events []lin.Event) bool {
	for _, f := range events {
		if f.Kind == lin.Fault && grantedToAnotherAfter(events, f) {
			return true
		}
	}
	return false
}

// Exercise is what a run shows of its fault's bite: whether its exercise
// was judged, whether the fault exercised the lock, and the windows it
// rests on.
type Exercise struct {
	Judged    bool
	Exercised bool
	// Opened is false when the rule exposes a holder's claim and no
	// window opened: the fault could not take this lock from its holder
	// (n/a, measured).
	Opened    bool
	Exposures []Exposure
	Why       string
	// Faults and FaultsExercised count, in a run with no rule of its
	// own (a random schedule), the faults whose kinds declared one and
	// those of them that bit; the run's verdict does not rest on them.
	Faults, FaultsExercised int
}

// Exercised judges a run's exercise by its scenario's rule.
func Exercised(in Input) Exercise {
	switch in.Risk {
	case RiskNotJudged:
		// No rule for the run; each fault may bring its kind's own.
		return faultsExercised(in)
	case RiskContention:
		ex := Exercise{Judged: true, Opened: true, Exercised: Contended(in.Events)}
		if !ex.Exercised {
			ex.Why = "fewer than two clients acted on the resource"
		}
		return ex
	case RiskBothSides:
		return bothSidesExercised(in.Events)
	case RiskRecovery:
		ex := Exercise{Judged: true, Opened: true, Exercised: Recovered(in.Events)}
		if !ex.Exercised {
			ex.Why = "no other client was granted the lock after the fault struck"
		}
		// A recovery measured from a kill that came with the lease nearly
		// over, or after the section ended, times the lab's own delays,
		// not the lock's freeing of a dead holder's claim (issue 44's
		// guest crash: 5 to 161 ms "recoveries" of a 1 s lease).
		if late, why := struckTooLate(in); late {
			ex.Exercised, ex.Why = false, why
		}
		return ex
	}
	ex := Exercise{Judged: true, Exposures: Exposures(in.Events, in.Risk, in.Claim, in.TTL, in.Holders)}
	var why string
	for _, x := range ex.Exposures {
		if x.Opened {
			ex.Opened = true
		}
		if x.Exercised() {
			ex.Exercised = true
		}
		if why == "" {
			why = x.Rule
		}
	}
	if in.Risk != RiskAtExpiry {
		// Only a fault that stops the holder of a claim with no expiry
		// cannot open a window; one that strikes the servers opens it
		// whenever it finds a holder, and finding none is a miss.
		ex.Opened = true
	}
	switch {
	case len(ex.Exposures) == 0:
		ex.Opened, ex.Why = true, "the run recorded no fault"
	case !ex.Opened:
		ex.Why = "the danger window never opened: " + why
	case !ex.Exercised && why != "" && !anyOpened(ex.Exposures):
		ex.Why = "the danger window never opened: " + why
	case !ex.Exercised:
		ex.Why = "no other client came for the lock inside the danger window"
	}
	return ex
}

// anyOpened reports whether any of the windows opened.
func anyOpened(xs []Exposure) bool {
	for _, x := range xs {
		if x.Opened {
			return true
		}
	}
	return false
}

// Majority is how many of a cell's runs must have exercised the fault for
// it to be safe: more than half of its runs that were safe or not
// exercised, and at least one. A cell whose fault reached the window only
// by luck, in a minority of its runs, rests its safety on a schedule that
// mostly missed; a majority asks the schedule to reach the window as a
// rule, and the three runs of `bench matrix` then need two.
func Majority(runs int) int { return runs/2 + 1 }

// struckTooLate reports whether any fault of the run struck its holder too
// late to test it (StruckTooLate), with the first such fault's reason.
// Only a fault aimed at a client holding the lock is asked: a queued
// waiter's crash tests the queue, whatever is left of the holder's lease.
func struckTooLate(in Input) (bool, string) {
	fromGrant := in.Claim.Expires && !in.Claim.Renews
	for _, e := range in.Events {
		if e.Kind != lin.Fault || e.Injection == nil || !strikesAHolder(in.Events, e) {
			continue
		}
		lease := in.Claim.Lease
		if lease <= 0 {
			lease = in.TTL
		}
		if late, why := StruckTooLate(e, lease, fromGrant); late {
			return true, e.Injection.Kind + ": " + why
		}
	}
	return false, ""
}

// strikesAHolder reports whether fault struck a client whose grant was in
// force when it struck (by the history's Acquired and Released events).
func strikesAHolder(events []lin.Event, fault lin.Event) bool {
	held := grantsInForce(events, fault.Time)
	for _, c := range fault.Injection.Clients {
		if _, ok := held[c]; ok {
			return true
		}
	}
	return false
}

// grantsInForce maps each client whose grant was in force at t (by the
// history's Acquired and Released events) to that grant's time.
func grantsInForce(events []lin.Event, t int64) map[int]int64 {
	held := map[int]int64{}
	for _, e := range events {
		if e.Time > t {
			break
		}
		switch e.Kind {
		case lin.Acquired:
			held[e.Client] = e.Time
		case lin.Released:
			delete(held, e.Client)
		}
	}
	return held
}
