package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// A triggerHandler carries out one trigger type (nemesis.Trigger) in a
// run: the schedule's interpreter (runSchedule) chooses a step's handler
// once, by its trigger's type (handlerOf), and asks it at each point
// where triggers differ; the rest of a step (the role it aims at, the
// inject, the window, the heal, the record) is the same for all. The
// trigger types are a schedule's data, in nemesis; their handlers need
// the run's workers and system, which nemesis must not know, so each
// lives here, in a file named after its type (trigger_attime.go, ...).
type triggerHandler interface {
	// stopped is the client the trigger stops at a failpoint before the
	// faults, and the failpoint; -1 and "" if it stops none. Only a
	// schedule's first step can stop one (nemesis.Schedule.Validate).
	stopped() (slot int, failpoint string)
	// warmUp runs, as the first step's trigger, from the moment every
	// client may go (or, stopping one, the stopped one alone) to the
	// run's time zero.
	warmUp(ctx context.Context, r *scheduleRun) error
	// aim resolves the target f names to what it strikes now.
	aim(ctx context.Context, r *scheduleRun, f *strike) error
	// during waits out f's fault from the moment it is whole to its heal,
	// and does to the clients in between what the trigger asks.
	during(ctx context.Context, r *scheduleRun, f *strike) error
	// healed runs once f's fault is healed, before its record.
	healed(ctx context.Context, r *scheduleRun, f *strike) error
}

// handlerOf is the handler of st's trigger: the one place the engine
// tells trigger types apart.
func handlerOf(st nemesis.Step) (triggerHandler, error) {
	t, err := st.Trigger()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case nemesis.AtTime:
		return atTime{t}, nil
	case nemesis.OnHolder:
		return onHolder{t}, nil
	case nemesis.AtFailpoint:
		return atFailpoint{t}, nil
	case nemesis.HeldAtFailpoint:
		return heldAtFailpoint{t}, nil
	case nemesis.InQueue:
		return inQueue{t}, nil
	}
	return nil, fmt.Errorf("no handler for trigger %T", t)
}

// handlersOf is the handler of each of s's steps, in order.
func handlersOf(s nemesis.Schedule) ([]triggerHandler, error) {
	out := make([]triggerHandler, len(s.Faults))
	for i, st := range s.Faults {
		var err error
		if out[i], err = handlerOf(st); err != nil {
			return nil, fmt.Errorf("fault %d: %w", i, err)
		}
	}
	return out, nil
}

// awaitStopped waits until the client in slot stands at failpoint, the
// warm-up of every trigger that stops one. Its bound covers a loaded
// machine's start and a few TTLs of contention for the first grant.
func (r *scheduleRun) awaitStopped(ctx context.Context, slot int, failpoint string) error {
	w := r.sys.slots[slot]
	if _, err := w.Await(ctx, "failpoint "+failpoint, 30*time.Second+5*r.ttl); err != nil {
		return err
	}
	// A failpoint inside an acquire sits after its write: the client holds
	// the lock on the servers from about now, though its history records
	// no grant until the acquire returns.
	r.stopped = stoppedClient{id: w.ID, at: lin.Now()}
	return nil
}

// goAllBut lets every client but those in skip start contending.
func (r *scheduleRun) goAllBut(skip ...int) error {
	for i, w := range r.sys.slots {
		if !slices.Contains(skip, i) {
			if err := w.Go(); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitOut waits d into f's fault; when ctx ends first, it heals the fault
// (the run is over, and nothing may stay cut or stopped) and says why.
func (r *scheduleRun) waitOut(ctx context.Context, f *strike, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		f.kind.Heal(context.Background(), r.sys, f.target)
		return ctx.Err()
	}
}
