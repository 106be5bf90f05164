package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
)

// FixedJob is the job that runs the nemesis's fixed schedule name for
// spec: on the topology the schedule needs, with the run's TTL, fencing
// and seed. The matrix's schedule cells and the benchmark's recovery run
// are such jobs.
func FixedJob(name string, spec impls.Spec, topo string) (Job, error) {
	return fixedJob(name, spec, topo, nil)
}

// fixedJob is FixedJob with sec, when not nil, as what every worker's
// section does (a workload a scenario names beside its schedule).
func fixedJob(name string, spec impls.Spec, topo string, sec sections) (Job, error) {
	f, ok := nemesis.Fixed[name]
	if !ok {
		return Job{}, fmt.Errorf("unknown fixed schedule %q; valid: %v", name, nemesis.FixedNames())
	}
	if spec.Backend.InProcess {
		return Job{}, ErrInProcess
	}
	schedule := func(fencing bool, ttl time.Duration) nemesis.Schedule {
		s := f(spec.Name, fencing, ttl, checker.Bound(ttl))
		s.Topology = topo
		return s
	}
	// Fencing is the caller's to ask for; the schedule checks the rest.
	if err := schedule(false, time.Second).Validate(); err != nil {
		return Job{}, err
	}
	// The servers do not depend on the TTL or fencing.
	decl, err := ScheduleTopology(spec, schedule(false, time.Second))
	if err != nil {
		return Job{}, err
	}
	return Job{
		Name:     name,
		Topology: decl,
		Body: func(ctx context.Context, env *Env) (*Outcome, error) {
			s := schedule(env.Fencing, env.TTL)
			if env.FailOver > 0 {
				// A fault on a server must outlast the profile's fail-over
				// and then a lease, as the fast profile's fixed faults
				// outlast its own.
				s = s.Outlasting(env.FailOver + env.TTL)
			}
			s.Seed = env.Seed
			return runFixed(ctx, env, s, sec)
		},
	}, nil
}

// runFixed runs a fixed schedule on env, its workers' sections sec's
// (nil: the plain read-work-write), and has the checker judge it
// (Env.Judge). Besides the verdict it reports, as figures, what the
// scripted scenarios it replaces reported, and sec's own.
func runFixed(ctx context.Context, env *Env, s nemesis.Schedule, sec sections) (*Outcome, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(s.Faults) == 0 {
		return nil, errors.New("a scenario's schedule has a fault")
	}
	run, _, err := runSchedule(ctx, env, s, sec, env.Logf)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Figures: map[string]float64{}, Clients: s.Clients, Processes: true}
	first := s.Faults[0]
	t, err := first.Trigger()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case nemesis.InQueue:
		queueFigures(env, t.Waiter, run.Events, out)
	case nemesis.AtFailpoint:
		if err := faultFigures(env, first.Kind, t.Client, run.Events, out); err != nil {
			return nil, err
		}
	case nemesis.HeldAtFailpoint:
		// The fault strikes a server; the holder it puts at risk is the
		// client stopped at the failpoint, whatever the history's order.
		env.Holders = []int{t.Holder}
		if err := faultFigures(env, first.Kind, t.Holder, run.Events, out); err != nil {
			return nil, err
		}
	default:
		windowFigures(env, run.Events, out)
		splitFigures(run.Events, out)
	}
	for name, v := range run.Figures {
		out.Figures[name] = v
	}
	if sec != nil {
		sec.figures(run.Events, out)
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}

// queueFigures reads off the history how long after the holder's release
// (the start of the window the runner recorded) a client other than the
// struck waiter was first granted the lock: next-grant-ms, -1 if never.
func queueFigures(env *Env, struck int, events []lin.Event, out *Outcome) {
	out.Figures["next-grant-ms"] = -1
	if len(env.Available) == 0 {
		return
	}
	release := env.Available[0].Start
	for _, e := range events {
		if e.Kind == lin.Acquired && e.Client != struck && e.Time > release {
			d := time.Duration(e.Time - release)
			out.Figures["next-grant-ms"] = float64(d.Milliseconds())
			out.Detail = fmt.Sprintf("client %d held %v after the release", e.Client, d.Round(time.Millisecond))
			return
		}
	}
}

// windowFigures counts the grants inside each window the run recorded
// (a cut of some nodes: see runSchedule), as grants-NAME figures and in
// the detail.
func windowFigures(env *Env, events []lin.Event, out *Outcome) {
	var details []string
	for _, w := range append(slices.Clone(env.Available), env.QuorumLoss...) {
		n := 0
		for _, e := range events {
			if e.Kind == lin.Acquired && e.Time >= w.Start && e.Time <= w.End {
				n++
			}
		}
		out.Figures["grants-"+w.Name] += float64(n)
		details = append(details, fmt.Sprintf("%s: %d grants", w.Name, n))
	}
	if len(details) > 0 {
		out.Detail = strings.Join(details, ", ")
	}
}

// LeaseFromGrant reports whether spec's lease runs one TTL from its grant:
// it expires by itself and nothing renews it while the holder lives (SET
// NX PX, Redlock). Only for such a lock does the time since the grant say
// how much of the lease is left (checker.LeaseLeft, StruckTooLate).
func LeaseFromGrant(spec impls.Spec) bool { return spec.Caps.Expiry && !spec.Caps.Renewal }

// faultFigures reads off the history how long the fault lasted, when a
// client other than the one stopped at the failpoint first read the
// resource during it (-1: never), how long the holder had held the lock
// and how much of its lease was left when it struck, and, for a killed
// holder, the time until another client was granted the lock
// (Outcome.Recovery) and what of it came past the end of the dead
// holder's lease. They are figures only: the verdict is the checker's.
func faultFigures(env *Env, kind string, victim int, events []lin.Event, out *Outcome) error {
	var fault *lin.Event
	for i, e := range events {
		if e.Kind == lin.Fault {
			fault = &events[i]
			break
		}
	}
	if fault == nil {
		return errors.New("the fault is missing from the history")
	}
	out.Figures["fault-ms"] = float64(time.Duration(fault.End - fault.Time).Milliseconds())
	// How long the holder had held the lock when the fault struck, and,
	// for a lease that runs from its grant, how much of it was left: a
	// fault that lands late in the lease tests less than its scenario says
	// (checker.StruckTooLate), and a recovery is the lock's own only past
	// what was left.
	left, held := checker.LeaseLeft(*fault, env.TTL)
	if held {
		out.Figures["held-before-fault-ms"] = float64(time.Duration(fault.Time - fault.Injection.HeldSince).Milliseconds())
	}
	fromGrant := LeaseFromGrant(env.Impl)
	if held && fromGrant {
		out.Figures["lease-left-ms"] = float64(left.Milliseconds())
	}
	out.Figures["other-read-during-fault-ms"] = -1
	for _, e := range events {
		if e.Kind == lin.Read && e.Client != victim && e.Time > fault.Time && e.Time < fault.End {
			out.Figures["other-read-during-fault-ms"] = float64(time.Duration(e.Time - fault.Time).Milliseconds())
			break
		}
	}
	if env.Impl.Caps.LostNotify && kind != nemesis.ClientKill {
		// How long the struck holder went on before its lock told it the
		// lock was lost, from the fault's start; -1: not while it held it.
		out.Figures["lost-notice-ms"] = -1
		for _, e := range events {
			if e.Kind == lin.Lost && e.Client == victim && e.Time >= fault.Time {
				out.Figures["lost-notice-ms"] = float64(time.Duration(e.Time - fault.Time).Milliseconds())
				break
			}
		}
	}
	if kind != nemesis.ClientKill {
		return nil
	}
	// The checker's liveness bound: past it, the run is stuck anyway.
	bound := checker.Bound(env.TTL)
	for _, e := range events {
		if e.Kind == lin.Acquired && e.Client != victim && e.Time > fault.Time {
			if d := time.Duration(e.Time - fault.Time); d <= bound {
				out.Recovery = d
				out.Figures["recovery-ms"] = float64(d.Milliseconds())
				if held && fromGrant {
					// The lock's own delay: what it took past the end of the
					// dead holder's lease (its poll, its clock check).
					out.Figures["recovery-past-lease-ms"] = float64((d - max(left, 0)).Milliseconds())
				}
				return nil
			}
			break
		}
	}
	out.Detail = fmt.Sprintf("no other client was granted the lock within %v of the fault", bound)
	return nil
}
