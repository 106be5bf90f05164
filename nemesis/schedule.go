package nemesis

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
)

// Duration is a time.Duration written as "1.5s" in schedule files, so a
// reader can edit one by hand.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"1.5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Step is one fault of a schedule: at At after the workload starts, Kind
// strikes Target (a client slot, a server, or HolderTarget: the client in
// its critical section then), and heals Duration later. The runner delays a step (and
// the run's end) when the heal before it finished late, so that at least
// the liveness bound separates a finished heal from what comes next.
type Step struct {
	At       Duration `json:"at"`
	Kind     string   `json:"kind"`
	Target   string   `json:"target"`
	Duration Duration `json:"duration"`
	// After, on the first step only, names a failpoint (faults/failpoint):
	// the target client alone takes the first grant and stops there, the
	// others start contending only then, and the step strikes at that
	// moment (its At is 0; later steps count from it). The target stays
	// at its failpoint, inside its critical section, until just before
	// the heal. This is how the
	// lab's scripted scenarios land a fault exactly where a lesson needs it.
	After string `json:"after,omitempty"`
	// Holder, with After, is the client stopped at the failpoint when the
	// fault strikes something else (a lock server): it stays inside its
	// section through the fault and goes on only after the heal, once the
	// others had time to be granted the lock, and leaves the run after
	// that stale section, so the only client left to write is the one the
	// lost lock went to. Empty: the target itself is the client stopped.
	Holder string `json:"holder,omitempty"`
	// Queue, with After and Holder, lines the other clients up behind the
	// holder stopped at its failpoint before the fault strikes: the target
	// joins the lock's queue first, right behind the holder, then the
	// rest. The fault (a kill or a pause) strikes the target, a waiter in
	// line; the holder releases half a TTL later, while the target is
	// still dead or frozen, and a live waiter behind it must be granted
	// the lock within one TTL of that release (a window the checker
	// judges). This is how a waiter that dies in line is tested on locks
	// whose waiters queue on the server.
	Queue bool `json:"queue,omitempty"`
	// Window declares what the checker must see while the fault holds
	// (KeepsGranting, GrantsNothing); empty: no window, only safety and
	// liveness after the heal. A fixed schedule declares its windows; a
	// drawn one never does, as its faults may be too short for any grant.
	Window Window `json:"window,omitempty"`
	// Await, with After and Holder on a step aimed at MasterTarget, holds
	// the fault back, once the holder stands at its failpoint and the
	// master is resolved, until the servers are in a state a moment
	// cannot promise (ReplicaAcked: a replica has acknowledged the grant);
	// the fault's record says what was awaited and seen. A run whose
	// awaited state does not come within its bound fails. Empty: the
	// step strikes at once.
	Await Await `json:"await,omitempty"`
	// GoesOn, with Holder, says when the holder stopped at its failpoint
	// goes on: empty, after the heal (see Holder); InFault, while the
	// fault still holds, once another client has read the resource since
	// it began, and at the latest as long before the heal as a client cut
	// off at a failpoint goes on (the lesser of a TTL and half the fault).
	// A holder cut off with a server then meets that server as the cut
	// left it, and nothing the heal sets moving (a packet held back by the
	// cut, then let through) can come first.
	GoesOn GoesOn `json:"goes_on,omitempty"`
}

// GoesOn is when a holder stopped at its failpoint goes on (Step.GoesOn).
type GoesOn string

const (
	// InFault: the holder goes on while the fault still holds.
	InFault GoesOn = "in-fault"
	// InLease: the holder goes on while the fault still holds, once
	// another client has read the resource since it began, and at the
	// latest half a TTL into it or when a quarter of its lease is left,
	// whichever comes first: a holder that must write within its own lease
	// (a fault that leaves the lock held, as a server down past the max
	// TTL) goes on in time, on a loaded machine too.
	InLease GoesOn = "in-lease"
	// OnceReplicated: the holder goes on after the heal, once another
	// client has read the resource since the fault began (as with none
	// said) and a lock server that says it is the master counts a replica
	// online. A Sentinel group takes seconds after a fail-over to point
	// its other servers at the promoted master, and a master with
	// no replica online answers a WAIT with 0 after its timeout: a holder
	// that went on inside that gap would meet a group that cannot show
	// what the schedule asks (sentinel-kill-at-grant: whether a WAIT sent
	// to whichever master the client reaches is answered there by a
	// replica that owes the lost grant nothing).
	OnceReplicated GoesOn = "once-replicated"
)

// InCut is how long before the heal a client stopped at a failpoint and
// struck (or held) inside a fault goes on at the latest: a TTL, at most
// half of the fault, so its write and release meet the fault.
func InCut(ttl, fault time.Duration) time.Duration { return min(ttl, fault/2) }

// Window is a span of a run the checker judges, declared by a step.
type Window string

const (
	// KeepsGranting: grants must go on while the fault holds (a cut that
	// leaves a quorum reachable); none is as bad as stuck.
	KeepsGranting Window = "keeps-granting"
	// GrantsNothing: no grant may come while the fault holds (a cut that
	// leaves no quorum); the run is then unavailable, as a consistent lock
	// should be, never unsafe.
	GrantsNothing Window = "grants-nothing"
)

// WindowGrace is how long after its fault is whole a grants-nothing window
// opens (a keeps-granting one opens at once): a grant whose replies were already on their way when the cut
// closed is not the fault's. A client may also hold back a grant its
// majority already gave until every other node has answered or timed out
// (node-redlock waits so, up to its command timeout, which the lab sets to
// half the TTL as for its own clients), so the window opens that much
// later too; a lock that grants without a quorum does so all through a
// cut of several TTLs, not only in its first half TTL.
func WindowGrace(ttl time.Duration) time.Duration { return 200*time.Millisecond + ttl/2 }

// Heal is when the step heals, from the start of the workload.
func (s Step) Heal() time.Duration { return time.Duration(s.At + s.Duration) }

// Stopped is the client a failpoint step stops: its Holder, else its target.
func (s Step) Stopped() string {
	if s.Holder != "" {
		return s.Holder
	}
	return s.Target
}

// Schedule is a run of the contention workload with its faults: what the
// generator draws, what the shrinker cuts down, and what a schedule file
// holds for `bench check -schedule`. It fixes which faults strike what and
// when, not the interleaving the scheduler and the network choose, so a
// replay is likely, not certain, to fail the same way.
type Schedule struct {
	// Name names a fixed schedule (see Fixed); empty for a drawn one.
	Name string `json:"name,omitempty"`
	Seed int64  `json:"seed"`
	Impl string `json:"impl"`
	// Topology names the servers' topology (topology.Named); empty is the
	// single-server one, so every schedule older than the axis replays.
	Topology string   `json:"topology,omitempty"`
	Fencing  bool     `json:"fencing"`
	TTL      Duration `json:"ttl"`
	Clients  int      `json:"clients"`
	Duration Duration `json:"duration"` // the workload's length
	// WorkMin and WorkMax bound each critical section's work (uniform
	// between them). Zero: explore's long sections (see
	// engine.scheduleWork), which is what every drawn schedule uses.
	// Fixed schedules set the short sections of the scripted scenarios
	// they replace, which reach the checker's minimum in a second.
	WorkMin Duration `json:"work_min,omitempty"`
	WorkMax Duration `json:"work_max,omitempty"`
	// LongFor, when set, ends the sections of WorkMin..WorkMax that long
	// after the last heal: from then on every section is a short one
	// (ShortWorkMin..ShortWorkMax). A fault that needs long sections
	// needs them only until its consequence has played out (late-release:
	// the stale release landing inside another holder's section); the
	// progress the checker asks for after that comes in a fraction of the
	// time. Zero: the same sections for the whole run.
	LongFor Duration `json:"long_for,omitempty"`
	// Think is each client's pause between a release and its next acquire
	// (zero: none), so that a client meets locks the others hold.
	Think Duration `json:"think,omitempty"`
	// Standing are faults in place before any client is granted the lock
	// and for the whole run, each struck once before the first grant and
	// healed only when the run has stopped: a condition the faults land
	// in (the holder cut off two of five nodes, so that its grant lands on
	// a bare majority), not a fault the checker waits to see healed. Each
	// names a kind and a target, nothing else.
	Standing []Step `json:"standing,omitempty"`
	Faults   []Step `json:"faults"`
	// Verdict is what the run that wrote this file was judged; a replay
	// is compared with it. Empty in a generated schedule.
	Verdict string `json:"verdict,omitempty"`
}

// Validate checks a schedule against the lock it names: known kinds that
// apply, targets that exist, faults in order without overlap and inside the
// run.
func (s Schedule) Validate() error {
	spec, err := impls.Lookup(s.Impl)
	if err != nil {
		return err
	}
	if s.TTL <= 0 || s.Duration <= 0 {
		return errors.New("ttl and duration must be positive")
	}
	if s.Clients < 1 {
		return errors.New("clients must be at least 1")
	}
	if s.LongFor < 0 {
		return errors.New("long_for must not be negative")
	}
	if s.WorkMin < 0 || s.WorkMax < s.WorkMin {
		return fmt.Errorf("work must satisfy 0 <= work_min <= work_max, not %v and %v", time.Duration(s.WorkMin), time.Duration(s.WorkMax))
	}
	if s.Fencing && !spec.Caps.Fencing {
		return fmt.Errorf("%s issues no fencing tokens, so fencing cannot apply", spec.Name)
	}
	topo, err := TopologyFor(spec, s.Topology, s.Clients)
	if err != nil {
		return err
	}
	// A schedule that fails a master over brings the replica it promotes,
	// as one with network faults brings hosts.
	topo.Replica = topo.Replica || slices.ContainsFunc(s.Faults, func(st Step) bool { return promotes(st.Kind) })
	if s.Think < 0 {
		return errors.New("think must not be negative")
	}
	for i, st := range s.Standing {
		if err := validStanding(spec, topo, st); err != nil {
			return fmt.Errorf("standing fault %d: %w", i, err)
		}
	}
	var prevHeal time.Duration
	for i, st := range s.Faults {
		if err := validStep(spec, topo, i, st); err != nil {
			return fmt.Errorf("fault %d: %w", i, err)
		}
		if k, err := Lookup(st.Kind); err == nil {
			if why := clashing(k, s.Faults[:i]); why != "" {
				return fmt.Errorf("fault %d: %s", i, why)
			}
			if why := left(st.Target, s.Faults[:i]); why != "" {
				return fmt.Errorf("fault %d: %s", i, why)
			}
		}
		if promotes(st.Kind) && i != len(s.Faults)-1 {
			// The old master stays dead and its address moved: nothing
			// after a fail-over could find the servers it names.
			return fmt.Errorf("fault %d: a fail-over must be the schedule's last fault", i)
		}
		if time.Duration(st.At) < prevHeal {
			return fmt.Errorf("fault %d starts at %v, before the one before it heals (%v): faults do not overlap", i, time.Duration(st.At), prevHeal)
		}
		prevHeal = st.Heal()
	}
	if prevHeal > time.Duration(s.Duration) {
		return fmt.Errorf("the last fault heals at %v, after the run ends (%v)", prevHeal, time.Duration(s.Duration))
	}
	return nil
}

// validStep checks step i on its own: a kind that applies, a target it
// can strike, then its trigger.
func validStep(spec impls.Spec, topo Topology, i int, st Step) error {
	k, err := Lookup(st.Kind)
	if err != nil {
		return err
	}
	if err := k.Applies(spec, topo); err != nil {
		return fmt.Errorf("%s does not apply to %s: %w", st.Kind, spec.Name, err)
	}
	if !kindTargets(k, topo, st.Target) {
		targets := k.Targets(topo)
		if strikesClients(targets) {
			targets = append(targets, HolderTarget)
		}
		return fmt.Errorf("%s cannot strike %q; targets: %v", st.Kind, st.Target, targets)
	}
	if st.At < 0 || st.Duration < 0 {
		return errors.New("negative time")
	}
	return validTrigger(spec, topo, i, k, st)
}

// validTrigger checks when and around which client step i strikes: its
// failpoint, holder, queue, window, await and goes_on. The specific
// checks come before Step.Trigger's: their messages say more.
func validTrigger(spec impls.Spec, topo Topology, i int, k Kind, st Step) error {
	if st.After != "" && st.Target == HolderTarget {
		return fmt.Errorf("a failpoint step names the client it stops, not %q", HolderTarget)
	}
	if _, ok := k.(atFailpoint); ok && st.After == "" {
		return fmt.Errorf("%s strikes only a client stopped at a failpoint (after)", st.Kind)
	}
	if st.After != "" {
		if err := validAfter(spec, topo, i, st); err != nil {
			return err
		}
	} else if st.Holder != "" {
		return errors.New("a holder is the client stopped at a failpoint, and the step names none (after)")
	}
	if st.Queue {
		if err := validQueue(topo, st); err != nil {
			return err
		}
	}
	if _, err := st.Trigger(); err != nil {
		return err
	}
	if err := validWindow(topo, st); err != nil {
		return err
	}
	if err := validAwait(topo, st); err != nil {
		return err
	}
	if st.GoesOn != "" && st.GoesOn != InFault && st.GoesOn != InLease && st.GoesOn != OnceReplicated {
		return fmt.Errorf("unknown goes_on %q; valid: %s, %s, %s", st.GoesOn, InFault, InLease, OnceReplicated)
	}
	if st.GoesOn == OnceReplicated {
		if err := aimsAtMaster(topo, st, string(OnceReplicated)); err != nil {
			return err
		}
	}
	if st.GoesOn != "" && (st.Holder == "" || st.Queue) {
		return errors.New("goes_on says when the holder a server fault holds up goes on: the step needs a holder (after, holder) and no queue")
	}
	return nil
}

// Promoter is a Kind that replaces the master by its replica for good
// (the old master stays dead): a schedule with one brings the replica, and
// the fault is its last (nothing after it could find the servers it
// names).
type Promoter interface{ PromotesReplica() }

// promotes reports whether a fault of the named kind is a Promoter.
func promotes(kind string) bool {
	_, ok := kinds[kind].(Promoter)
	return ok
}

// validStanding checks a standing fault: a kind that applies, a target it
// can strike, and no trigger or time of its own.
func validStanding(spec impls.Spec, topo Topology, st Step) error {
	k, err := Lookup(st.Kind)
	if err != nil {
		return err
	}
	if err := k.Applies(spec, topo); err != nil {
		return fmt.Errorf("%s does not apply to %s: %w", st.Kind, spec.Name, err)
	}
	if !slices.Contains(k.Targets(topo), st.Target) {
		return fmt.Errorf("%s cannot strike %q; targets: %v", st.Kind, st.Target, k.Targets(topo))
	}
	if promotes(st.Kind) {
		return fmt.Errorf("%s replaces the master for good: it is a schedule's last fault, never a standing one", st.Kind)
	}
	if st.At != 0 || st.Duration != 0 || st.After != "" || st.Holder != "" || st.Queue || st.Window != "" || st.Await != "" || st.GoesOn != "" {
		return errors.New("a standing fault names a kind and a target only: it strikes before the first grant and holds for the whole run")
	}
	return nil
}

// Load reads and validates a schedule file.
func Load(path string) (Schedule, error) {
	var s Schedule
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read schedule: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("schedule %s: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("schedule %s: %w", path, err)
	}
	return s, nil
}

// Write writes the schedule as indented JSON.
func (s Schedule) Write(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Lead is how long the workload runs before the first fault of a compacted
// schedule: time for every client to take the lock at least once.
const Lead = time.Second

// Compact moves every fault as early as the liveness rule allows: the
// first at Lead, each next one bound after the one before heals (so the
// checker can still see progress after every heal), and ends the run bound
// after the last heal. With no faults the run lasts Lead + bound.
func (s Schedule) Compact(bound time.Duration) Schedule {
	out := s
	out.Faults = nil
	at := Lead
	for _, st := range s.Faults {
		st.At = Duration(at)
		if st.After != "" {
			st.At = 0 // it strikes at its failpoint, the run's time zero
		}
		out.Faults = append(out.Faults, st)
		at = st.Heal() + bound
	}
	out.Duration = Duration(at)
	if len(out.Faults) == 0 {
		out.Duration = Duration(Lead + bound)
	}
	return out
}

// validAfter checks a failpoint-triggered step: the first, on a client,
// at a failpoint every client passes or one the lock declares.
func validAfter(spec impls.Spec, topo Topology, i int, st Step) error {
	if i != 0 || st.At != 0 {
		return errors.New("only the first fault can wait for a failpoint, and its at must be 0")
	}
	if slot, err := ClientSlot(st.Stopped()); err != nil || slot >= topo.Clients {
		return fmt.Errorf("a failpoint stops a client of the run (client-0 to client-%d), not %q", topo.Clients-1, st.Stopped())
	}
	if _, err := ClientSlot(st.Target); st.Holder != "" && err == nil && st.Holder != st.Target && !st.Queue {
		return fmt.Errorf("the fault strikes client %q but stops %q: a holder is for faults on servers (or on a waiter in its queue)", st.Target, st.Holder)
	}
	generic := []string{failpoint.AfterAcquire, failpoint.InWork, failpoint.InCriticalSection, failpoint.BeforeRelease}
	if !slices.Contains(generic, st.After) && !slices.Contains(spec.Failpoints, st.After) {
		return fmt.Errorf("%s has no failpoint %q; it has %v", spec.Name, st.After, append(generic, spec.Failpoints...))
	}
	return nil
}

// validQueue checks a queue step: a kill or pause of a waiter, another
// client than the holder, with some client left to wait behind it.
func validQueue(topo Topology, st Step) error {
	if st.After == "" || st.Holder == "" {
		return errors.New("a queue step needs a holder stopped at a failpoint (after, holder)")
	}
	if st.Kind != ClientKill && st.Kind != ClientPause {
		return fmt.Errorf("a queue step kills or pauses a waiter, not %s", st.Kind)
	}
	if _, err := ClientSlot(st.Target); err != nil || st.Target == st.Holder {
		return fmt.Errorf("a queue step strikes a waiter, a client other than the holder %s, not %q", st.Holder, st.Target)
	}
	if topo.Clients < 3 {
		return errors.New("a queue step needs three clients: the holder, the waiter struck, and a live waiter behind it")
	}
	return nil
}

// validWindow checks a step's declared window against what its fault
// does: only a cut of some of a lock's nodes keeps or loses a quorum.
func validWindow(topo Topology, st Step) error {
	if st.Window == "" {
		return nil
	}
	if st.Window == KeepsGranting && st.Kind == NetIsolate && topo.IsSentinel(st.Target) {
		// One sentinel of the group cut off: the others keep their quorum
		// and the master is untouched, so grants go on.
		return nil
	}
	cut, leaves := CutLeavesQuorum(st, len(topo.Servers))
	switch {
	case st.Window != KeepsGranting && st.Window != GrantsNothing:
		return fmt.Errorf("unknown window %q; valid: %s, %s", st.Window, KeepsGranting, GrantsNothing)
	case !cut:
		return fmt.Errorf("a %s window needs a cut of some of the lock's nodes (%s), not %s", st.Window, NetPartitionNodes, st.Kind)
	case st.Window == KeepsGranting && !leaves:
		return fmt.Errorf("cutting %s leaves no quorum, so grants cannot be required to go on", st.Target)
	case st.Window == GrantsNothing && leaves:
		return fmt.Errorf("cutting %s leaves a quorum, so grants may go on", st.Target)
	}
	return nil
}

// validAwait checks what a step waits for before it strikes: a known
// state, of a master, read while a holder stands at its failpoint.
func validAwait(topo Topology, st Step) error {
	switch st.Await {
	case "":
		return nil
	case ReplicaAcked:
	default:
		return fmt.Errorf("unknown await %q; valid: %v", st.Await, Awaits)
	}
	if err := aimsAtMaster(topo, st, string(st.Await)); err != nil {
		return err
	}
	if st.After == "" || st.Holder == "" {
		return fmt.Errorf("%s reads the master's offset as of the holder's grant: the step needs a holder stopped at a failpoint (after, holder)", st.Await)
	}
	return nil
}

// Outlasting returns s with every step that strikes a server or a link
// between servers (not a client slot, not the holder) and lasts less than
// d stretched to d: a fault meant to outlast the servers' fail-over and a
// lease does so under a profile whose detection times are longer than
// the ones its length was chosen for (topology.Profile.FailOver). A client
// fault's length is the TTL's business alone and scales with it already.
// The steps after a stretched one, and the run's end, move by as much, so
// every gap the schedule declared (faults apart, the time after the last
// heal) stays as it was.
func (s Schedule) Outlasting(d time.Duration) Schedule {
	s.Faults = slices.Clone(s.Faults)
	var shift time.Duration
	for i, st := range s.Faults {
		s.Faults[i].At = Duration(time.Duration(st.At) + shift)
		if st.Duration <= 0 || time.Duration(st.Duration) >= d || st.Target == HolderTarget {
			continue
		}
		if _, err := ClientSlot(st.Target); err == nil {
			continue
		}
		shift += d - time.Duration(st.Duration)
		s.Faults[i].Duration = Duration(d)
	}
	s.Duration = Duration(time.Duration(s.Duration) + shift)
	return s
}

// aimsAtMaster checks that a step whose what (an await, a goes_on) reads a
// master's replicas aims at the master on a topology that has one.
func aimsAtMaster(topo Topology, st Step, what string) error {
	if st.Target != MasterTarget || !hasMaster(topo) {
		return fmt.Errorf("%s waits for a master's replica: the step must aim at %s on a topology with one (a Sentinel group, a Redis Cluster), not %q",
			what, MasterTarget, st.Target)
	}
	return nil
}
