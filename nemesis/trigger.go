package nemesis

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
)

// Trigger is when, and around which client, a step strikes: one of AtTime,
// OnHolder, AtFailpoint, HeldAtFailpoint and InQueue. A schedule file keeps
// the flat fields of Step (at, target, after, holder, queue), so that files
// written before stay readable; Step.Trigger reads them into one of these,
// and the engine chooses each step's handler by the type, once
// (engine/trigger.go), never by a combination of fields.
type Trigger interface{ trigger() }

// AtTime strikes At after the workload starts.
type AtTime struct{ At time.Duration }

// OnHolder strikes At after the workload starts, whichever client is in
// its critical section then (the target HolderTarget).
type OnHolder struct{ At time.Duration }

// AtFailpoint lets client Client alone take the first grant and stop at
// Failpoint, inside its section; the others start contending only then, the
// fault strikes Client there, and Client goes on from the failpoint just
// before the heal (a cut-off one earlier: see engine/trigger_atfailpoint.go).
type AtFailpoint struct {
	Failpoint string
	Client    int
}

// HeldAtFailpoint stops client Holder at Failpoint, as AtFailpoint does,
// while the fault strikes something else (a lock server); Holder goes on
// only after the heal, once another client has had the lock, and leaves
// the run after that stale section. InFault: it goes on while the fault
// still holds, once another client has read the resource (Step.GoesOn);
// InLease, too, but within its lease (InLease). OnceReplicated: after the
// heal, and once a master counts a replica online too.
type HeldAtFailpoint struct {
	Failpoint      string
	Holder         int
	InFault        bool
	InLease        bool
	OnceReplicated bool
}

// InQueue stops client Holder at Failpoint, lines client Waiter up right
// behind it and the other clients behind Waiter, then strikes Waiter (a
// kill or a pause) while it waits in line; Holder releases half a TTL
// into the fault. A holder stopped inside its section (HoldsThrough)
// cannot release before it writes: it holds through the fault and goes on
// after the heal, as a HeldAtFailpoint holder does, so the struck waiter
// leaves the line while the lock is still held.
type InQueue struct {
	Failpoint      string
	Holder, Waiter int
	HoldsThrough   bool
}

func (AtTime) trigger()          {}
func (OnHolder) trigger()        {}
func (AtFailpoint) trigger()     {}
func (HeldAtFailpoint) trigger() {}
func (InQueue) trigger()         {}

// Trigger reads the step's trigger. It checks only what it needs to read
// the fields; Schedule.Validate checks the step against its lock.
func (s Step) Trigger() (Trigger, error) {
	if s.After == "" {
		if s.Holder != "" || s.Queue {
			return nil, fmt.Errorf("a holder or a queue needs a failpoint the holder stops at (after)")
		}
		if s.Target == HolderTarget {
			return OnHolder{At: time.Duration(s.At)}, nil
		}
		return AtTime{At: time.Duration(s.At)}, nil
	}
	stopped, err := ClientSlot(s.Stopped())
	if err != nil {
		return nil, fmt.Errorf("a failpoint stops a client: %w", err)
	}
	switch {
	case s.Queue:
		waiter, err := ClientSlot(s.Target)
		if err != nil {
			return nil, fmt.Errorf("a queue step strikes a waiter: %w", err)
		}
		return InQueue{Failpoint: s.After, Holder: stopped, Waiter: waiter, HoldsThrough: s.After == failpoint.InCriticalSection}, nil
	case s.Holder != "" && s.Holder == s.Target:
		return nil, fmt.Errorf("the holder %s is stopped while the fault strikes something else; to strike the client stopped, name no holder", s.Holder)
	case s.Holder != "":
		return HeldAtFailpoint{Failpoint: s.After, Holder: stopped, InFault: s.GoesOn == InFault, InLease: s.GoesOn == InLease,
			OnceReplicated: s.GoesOn == OnceReplicated}, nil
	default:
		return AtFailpoint{Failpoint: s.After, Client: stopped}, nil
	}
}
