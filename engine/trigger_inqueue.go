package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// inQueue carries out nemesis.InQueue: the holder stops at its
// failpoint, the waiter joins the lock's line right behind it and the
// others behind the waiter, and the fault (a kill or a pause) strikes the
// waiter in line; the holder releases half a TTL into the fault, or, held
// inside its section, holds through the fault.
type inQueue struct{ nemesis.InQueue }

func (t inQueue) stopped() (int, string) { return t.Holder, t.Failpoint }

// warmUp lines the clients up in a known order while the stopped one
// holds the lock: the waiter the step strikes, then, once it had time to
// join, the rest. Joining a line is one request (a queue entry, a
// sequential node) sent at once.
func (t inQueue) warmUp(ctx context.Context, r *scheduleRun) error {
	if err := r.awaitStopped(ctx, t.Holder, t.Failpoint); err != nil {
		return err
	}
	if err := r.sys.slots[t.Waiter].Go(); err != nil {
		return err
	}
	settle(ctx, queueSettle(r.env))
	if err := r.goAllBut(t.Holder, t.Waiter); err != nil {
		return err
	}
	settle(ctx, queueSettle(r.env))
	return nil
}

// aim resolves a role, though a queue step strikes a waiter.
func (inQueue) aim(ctx context.Context, r *scheduleRun, f *strike) error {
	return r.aimNow(ctx, f)
}

// during has the holder release while the waiter struck in line right
// behind it is still dead or frozen: half a TTL in, so that the verdict
// does not hinge on where in its heartbeat cycle the waiter was struck (a
// ZooKeeper waiter's node outlives its process by two thirds of a session
// timeout to a whole one; released at once, the next grant fell either
// side of a TTL from run to run). A live waiter must be granted the lock
// within one TTL of the release, a window the checker judges. A holder
// that holds through the fault releases nothing in it.
func (t inQueue) during(ctx context.Context, r *scheduleRun, f *strike) error {
	wait := f.duration()
	if t.HoldsThrough {
		f.note += fmt.Sprintf(", waiting in line right behind %s, which holds through the fault inside its section", f.st.Holder)
		return r.waitOut(ctx, f, wait)
	}
	settle(ctx, r.ttl/2)
	wait -= r.ttl / 2
	release := lin.Now()
	r.env.Available = append(r.env.Available, checker.Window{
		Name:  fmt.Sprintf("the TTL (%v) after the holder's release, a live waiter in line behind the silenced one", r.ttl),
		Start: release, End: release + int64(r.ttl)})
	if err := r.sys.slots[t.Holder].Continue(); err != nil {
		return fmt.Errorf("continue client %d: %w", t.Holder, err)
	}
	f.note += fmt.Sprintf(", waiting in line right behind %s, which released %v into the fault", f.st.Holder, r.ttl/2)
	return r.waitOut(ctx, f, wait)
}

// healed lets a holder that held through the fault go on, once another
// client has read the resource since the fault began (or holdUp passed),
// and leave after that section, as a heldAtFailpoint holder does.
func (t inQueue) healed(ctx context.Context, r *scheduleRun, f *strike) error {
	if !t.HoldsThrough {
		return nil
	}
	if err := r.sys.handOff(ctx, t.Holder, f.begin, holdUp(r.env, f.kind)); err != nil {
		return fmt.Errorf("continue client %d: %w", t.Holder, err)
	}
	return nil
}

// queueSettle is how long a woken client is given to join the line: a
// tenth of the TTL, many times the one request that joining takes (a queue
// entry, a sequential node). Short, because the line must form and the
// holder release within its lease: redis-fair renews nothing, and with
// the 300ms this once was, twice, plus the half TTL before the release,
// the holder's lease (one TTL) had run out before it released, so the
// live waiter was granted the lock by the expiry, not by the release the
// scenario is about.
func queueSettle(env *Env) time.Duration { return env.TTL / 10 }

// settle waits d, or until ctx ends.
func settle(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
