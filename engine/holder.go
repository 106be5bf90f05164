package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// holder returns the slot of the client inside its critical section (its
// history's last grant has no release after it), waiting up to within for
// one; when two are (a lock that failed), the one granted first. When no
// client enters its section in time (a stuck lock), it returns the client
// still running that was granted last, or the first still running, and
// says so in how: a client that left the run (a holder that went on and
// left after a held step) has no process left to strike (seen: explore of
// pg-unique-insert on pg-idle-timeouts, stuck after its holder left, ended
// at a clock skew aimed at it, "worker 0 had exited").
func (x *system) holder(ctx context.Context, within time.Duration) (slot int, how string) {
	// The slots do not change while it waits: faults do not overlap, so no
	// client is being replaced.
	x.mu.Lock()
	if x.sections == nil {
		x.sections = map[*Worker]*sectionWatch{}
	}
	var watches []*sectionWatch
	var running []bool
	for _, w := range x.slots {
		sw := x.sections[w]
		if sw == nil {
			sw = &sectionWatch{tail: historyTail{path: w.Spec.History}}
			x.sections[w] = sw
		}
		watches = append(watches, sw)
		running = append(running, w.Running())
	}
	x.mu.Unlock()
	deadline := time.Now().Add(within)
	for {
		for _, sw := range watches {
			sw.update()
		}
		in, last := pickHolder(watches, running)
		if in >= 0 {
			return in, ""
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if last < 0 {
				first := max(0, slices.Index(running, true))
				return first, fmt.Sprintf(" (no client in its section within %v, none still running granted yet)", within)
			}
			return last, fmt.Sprintf(" (no client in its section within %v: the one granted last)", within)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pickHolder returns the slot inside its section (the one granted first,
// when two are) and the slot still running that was granted last, each -1
// when there is none.
func pickHolder(watches []*sectionWatch, running []bool) (in, last int) {
	in, last = -1, -1
	for i, sw := range watches {
		if sw.in && (in < 0 || sw.granted < watches[in].granted) {
			in = i
		}
		if running[i] && sw.granted != 0 && (last < 0 || sw.granted > watches[last].granted) {
			last = i
		}
	}
	return in, last
}

// sectionWatch follows one worker's history to know whether it is inside
// a critical section.
type sectionWatch struct {
	tail    historyTail
	in      bool
	granted int64 // the time of its last grant, 0 before the first
}

func (sw *sectionWatch) update() {
	for _, e := range sw.tail.next() {
		switch e.Kind {
		case lin.Acquired:
			sw.in, sw.granted = true, e.Time
		case lin.Released:
			sw.in = false
		}
	}
}

// grantAfter waits, at most for bound, until some client records a grant
// after time after, and returns its time.
func (x *system) grantAfter(ctx context.Context, after int64, bound time.Duration) (int64, bool) {
	x.mu.Lock()
	all := append([]*Worker(nil), x.all...)
	x.mu.Unlock()
	return waitFor(ctx, all, lin.Acquired, after, bound)
}

// stoppedClient is a client a trigger stopped at a failpoint (its id, as
// the history knows it) and when it stood there (monotonic ns).
type stoppedClient struct {
	id int
	at int64
}

// heldSince is when the client holding the lock at time at was granted
// it, read from the clients' own histories, so that every fault's record
// (lin.Injection.HeldSince) says how much of the holder's lease was left
// when it struck. The holder is, in this order: a client with one of ids
// (the clients the fault struck) inside its critical section then; the
// client stopped at a failpoint, when the fault struck it or no client
// (a failpoint inside an acquire comes after the write that took the
// lock, before the grant is recorded), from the moment it stood there;
// any client inside its critical section. Among several, the one granted
// first. It is -1 when no client held the lock.
func (x *system) heldSince(ids []int, at int64, stopped stoppedClient) int64 {
	x.mu.Lock()
	all := append([]*Worker(nil), x.all...)
	x.mu.Unlock()
	var struck []*Worker
	for _, w := range all {
		if slices.Contains(ids, w.ID) {
			struck = append(struck, w)
		}
	}
	if t := earliestHeld(struck, at); t > 0 {
		return t
	}
	if stopped.at > 0 && stopped.at <= at && (len(ids) == 0 || slices.Contains(ids, stopped.id)) {
		return stopped.at
	}
	return earliestHeld(all, at)
}

// earliestHeld is the earliest grant among the workers inside a critical
// section at time at, -1 if none was.
func earliestHeld(workers []*Worker, at int64) int64 {
	since := int64(-1)
	for _, w := range workers {
		if t, in := grantHeldAt(w, at); in && (since < 0 || t < since) {
			since = t
		}
	}
	return since
}

// grantHeldAt reads w's history up to time at: whether w was inside a
// critical section then (a grant with no release after it), and that
// grant's time.
func grantHeldAt(w *Worker, at int64) (int64, bool) {
	t := &historyTail{path: w.Spec.History}
	defer t.close()
	var granted int64
	in := false
	for evs := t.next(); len(evs) > 0; evs = t.next() {
		for _, e := range evs {
			if e.Time > at {
				continue
			}
			switch e.Kind {
			case lin.Acquired:
				granted, in = e.Time, true
			case lin.Released:
				in = false
			}
		}
	}
	return granted, in
}
