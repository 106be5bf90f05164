package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// ScheduleRun is one run of a schedule: the contention workload over
// worker processes with the schedule's faults, judged by the checker.
type ScheduleRun struct {
	Schedule nemesis.Schedule
	Decision checker.Decision
	Events   []lin.Event
	// Injected counts the faults injected, by kind.
	Injected map[string]int
	Elapsed  time.Duration
}

// RunSchedule starts fresh servers, runs s.Clients worker processes
// contending for one key for s.Duration while it injects s's faults at
// their times (each healed before the next), then stops everything and
// hands the merged history to checker.Decide. No worker or server outlives
// it, whatever happens.
func RunSchedule(ctx context.Context, s nemesis.Schedule, logf func(string, ...any)) (*ScheduleRun, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	spec, err := impls.Lookup(s.Impl)
	if err != nil {
		return nil, err
	}
	if spec.Backend.InProcess {
		return nil, fmt.Errorf("a schedule runs each client as a process of its own, and %s's %v", spec.Name, ErrInProcess)
	}
	ttl := time.Duration(s.TTL)
	start := time.Now()
	opts := Options{Impl: spec, Topology: s.Topology, Fencing: s.Fencing, Seed: s.Seed, Clients: s.Clients, TTL: ttl}
	opts.defaults()
	decl, err := ScheduleTopology(spec, s)
	if err != nil {
		return nil, err
	}
	env, stop, err := startRun(ctx, decl, opts, s.Name)
	if err != nil {
		return nil, err
	}
	defer stop()
	run, end, err := runSchedule(ctx, env, s, logf)
	if err != nil {
		return nil, err
	}
	run.Decision = checker.Decide(checker.Input{Events: run.Events, TTL: ttl, End: end,
		QuorumLoss: env.QuorumLoss, Available: env.Available,
		Minimum: checker.DefaultMinimum, Timeout: env.CheckTimeout})
	run.Elapsed = time.Since(start)
	return run, nil
}

// ScheduleTopology is the lock's servers as s's faults need them: under
// the movable clock for a clock jump, on hosts of their own for network
// faults or a fail-over (which moves an address between hosts), with the
// replica a fail-over promotes.
func ScheduleTopology(spec impls.Spec, s nemesis.Schedule) (topology.Declaration, error) {
	named, err := topology.Lookup(s.Topology)
	if err != nil {
		return topology.Declaration{}, err
	}
	d, err := spec.Backend.On(named)
	if err != nil {
		return topology.Declaration{}, err
	}
	for _, st := range s.Faults {
		if st.Kind == nemesis.ServerClockJump {
			d = d.WithClockShift()
		}
		// Only a schedule with network faults (or a fail-over) puts
		// servers and clients on hosts of their own: namespaces cost time
		// to make.
		d.Hosts = d.Hosts || nemesis.NeedsHosts(st.Kind)
		if st.Kind == nemesis.FailOver {
			d = d.Merge(topology.Of(topology.ReplicaOf(d.Names(topology.Lock)[0])))
		}
	}
	return d, nil
}

// runSchedule runs s on env's servers: the workers, the faults at their
// times, the end of the run. It returns the merged history and when
// recording stopped; the caller has the checker judge it.
func runSchedule(ctx context.Context, env *Env, s nemesis.Schedule, logf func(string, ...any)) (*ScheduleRun, int64, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ttl := time.Duration(s.TTL)
	work := scheduleWork(s)
	sys := &system{env: env, next: s.Clients, work: work}
	defer sys.stopAll()
	// Each step's trigger; only the first can stop a client at a
	// failpoint (Validate): that client alone takes the first grant and
	// stops there; the others wait for "go".
	triggers := make([]nemesis.Trigger, len(s.Faults))
	for i, st := range s.Faults {
		var err error
		if triggers[i], err = st.Trigger(); err != nil {
			return nil, 0, fmt.Errorf("fault %d: %w", i, err)
		}
	}
	victim, trigger := -1, ""
	if len(triggers) > 0 {
		victim, trigger = nemesis.StoppedAt(triggers[0])
	}
	settlers, err := settlersOf(s)
	if err != nil {
		return nil, 0, err
	}
	for id := 0; id < s.Clients; id++ {
		w, err := startWithRetry(ctx, env, id, func(ws *WorkerSpec) {
			work(ws)
			switch {
			case trigger != "" && id == victim:
				ws.Arm = []string{trigger}
				// Settling comes before any grant, the victim's too.
				ws.WaitForGo = len(settlers) > 0
			case trigger != "" || len(settlers) > 0:
				ws.WaitForGo = true
			}
		})
		if err != nil {
			return nil, 0, err
		}
		sys.slots = append(sys.slots, w)
		sys.all = append(sys.all, w)
	}
	env.Phase(PhaseWorkers)
	if len(settlers) > 0 {
		if err := settleAll(ctx, env, sys, settlers, logf); err != nil {
			return nil, 0, err
		}
		for i, w := range sys.slots {
			// With a trigger, the victim alone goes now (goOthers below
			// lets the rest go once it stands at its failpoint).
			if trigger == "" || i == victim {
				if err := w.Go(); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	if trigger != "" {
		if _, err := sys.slots[victim].Await(ctx, "failpoint "+trigger, 30*time.Second+5*ttl); err != nil {
			return nil, 0, err
		}
		if err := sys.goOthers(ctx, victim, triggers[0]); err != nil {
			return nil, 0, err
		}
	}
	env.Phase(PhaseWarmUp)
	run := &ScheduleRun{Schedule: s, Injected: map[string]int{}}
	t0 := time.Now()
	sleepUntil := func(at time.Duration) error {
		select {
		case <-time.After(time.Until(t0.Add(at))):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// A heal can take longer than planned (a restarted server must answer
	// first). No fault starts less than the liveness bound after the last
	// heal really finished, and the run does not end before that either
	// unless some client was granted the lock since: the checker then
	// always sees a grant after every heal, or its whole bound without
	// one, and a stuck verdict is the lock's, never a fault that came too
	// soon or a run that ended too early.
	bound := checker.Bound(ttl)
	var notBefore, lastHeal time.Duration
	var healed int64 // when the last heal finished (monotonic ns)
	for i, st := range s.Faults {
		if err := sleepUntil(max(time.Duration(st.At), notBefore)); err != nil {
			return nil, 0, err
		}
		// Before the first fault (a schedule's lead) and between faults
		// is the run going on between them.
		env.Phase(PhaseAfter)
		k, err := nemesis.Lookup(st.Kind)
		if err != nil {
			return nil, 0, err
		}
		// A fault aimed at the holder strikes the client in its section
		// now; the history names which one.
		target, shown := st.Target, st.Target
		if _, ok := triggers[i].(nemesis.OnHolder); ok {
			slot, how := sys.holder(ctx, ttl)
			target = fmt.Sprintf("client-%d", slot)
			shown = "holder " + target + how
		}
		// A fault aimed at a role strikes the server that has it now, and
		// heals that same server even if the role has moved since.
		var awaited string
		if role, ok := nemesis.RoleOf(target); ok {
			if target, err = sys.ServerWithRole(ctx, role); err != nil {
				return nil, 0, fmt.Errorf("fault %d (%s %s): %w", i, st.Kind, shown, err)
			}
			shown = role + " " + target
			if st.Await != "" {
				// It strikes only once the state it waits for has come on
				// that server (Validate allows an await on a master only);
				// the wait is the nemesis's, the lock knows nothing of it.
				if awaited, err = nemesis.AwaitOn(ctx, sys, st.Await, target); err != nil {
					return nil, 0, fmt.Errorf("fault %d (%s %s): %w", i, st.Kind, shown, err)
				}
				logf("fault %d/%d: awaited %s", i+1, len(s.Faults), awaited)
			}
			if nemesis.WithHolder(st.Kind) {
				// The server goes with the holder: the one stopped at its
				// failpoint in a fixed schedule, or, drawn at a random
				// moment by explore, whichever client holds the lock now.
				var slot int
				if held, ok := triggers[i].(nemesis.HeldAtFailpoint); ok {
					slot = held.Holder
					shown = fmt.Sprintf("%s with client-%d", shown, slot)
				} else {
					var how string
					slot, how = sys.holder(ctx, ttl)
					shown = fmt.Sprintf("%s with holder client-%d%s", shown, slot, how)
				}
				target = nemesis.Link(fmt.Sprintf("client-%d", slot), target)
			}
		}
		if target == nemesis.HolderServerTarget {
			held, ok := triggers[i].(nemesis.HeldAtFailpoint)
			if !ok {
				return nil, 0, fmt.Errorf("fault %d (%s %s): the holder's server needs a holder held at a failpoint", i, st.Kind, shown)
			}
			if target, err = sys.serverOf(ctx, held.Holder); err != nil {
				return nil, 0, fmt.Errorf("fault %d (%s %s): %w", i, st.Kind, shown, err)
			}
			role, err := env.Topo.Role(ctx, target)
			if err != nil {
				role = "role unknown: " + err.Error()
			}
			shown = fmt.Sprintf("holder-server %s (client-%d's, the %s)", target, held.Holder, role)
			if nemesis.ClientOnly(st.Kind) {
				// A client fault: the holder's link to its server alone.
				target = nemesis.Link(fmt.Sprintf("client-%d", held.Holder), target)
			}
		}
		inj := sys.injection(st, target)
		inj.Awaited = awaited
		begin := lin.Now()
		note, err := k.Inject(ctx, sys, target)
		if err != nil {
			return nil, 0, fmt.Errorf("fault %d (%s %s): inject: %w", i, st.Kind, shown, err)
		}
		logf("fault %d/%d: %s %s for %v", i+1, len(s.Faults), st.Kind, shown, time.Duration(st.Duration))
		whole := lin.Now() // the cut is in place on every host only now
		wholeAt := time.Now()
		if trigger != "" && i == 0 {
			note += ", at failpoint " + trigger
		}
		// The heal comes st.Duration after the fault was in place, even if
		// injecting it took a while (a SIGSTOP waits for every thread).
		// A victim stopped at a failpoint stays inside its section and
		// leaves it just before the heal (a paused one reads the line when
		// it wakes; a killed one reads nothing), except one cut off by the
		// network: it goes on a TTL before the heal (at most half the cut),
		// so that its write, to the resource it still reaches, and its
		// release, to lock servers it does not, both meet the cut, as they
		// would for a holder that cannot know it was cut off.
		wait, inCut := time.Duration(st.Duration), time.Duration(0)
		_, struckStopped := triggers[i].(nemesis.AtFailpoint)
		if struckStopped && nemesis.IsNetwork(st.Kind) {
			inCut = nemesis.InCut(ttl, wait)
			wait -= inCut
		}
		held, isHeld := triggers[i].(nemesis.HeldAtFailpoint)
		if isHeld && held.InFault {
			// A holder held up by the fault goes on inside it, once another
			// client has read the resource since the fault began, at the
			// latest as long before the heal as a struck client would, and
			// leaves after that section; the fault then runs its course.
			// What the holder asks of a server cut off with it is answered
			// as the cut left that server, not after whatever the heal
			// lets through first (nemesis.Step.GoesOn).
			if err := sys.handOff(ctx, victim, begin, wait-nemesis.InCut(ttl, wait)); err != nil {
				return nil, 0, fmt.Errorf("continue client %d: %w", victim, err)
			}
			note += fmt.Sprintf(", %s went on %v into the fault", st.Holder, time.Since(wholeAt).Round(time.Millisecond))
			wait = max(0, wait-time.Since(wholeAt))
		}
		if q, ok := triggers[i].(nemesis.InQueue); ok && q.HoldsThrough {
			note += fmt.Sprintf(", waiting in line right behind %s, which holds through the fault inside its section", st.Holder)
		} else if ok {
			// The holder releases while the waiter struck in line right
			// behind it is still dead or frozen: half a TTL in, so that the
			// verdict does not hinge on where in its heartbeat cycle the
			// waiter was struck (a ZooKeeper waiter's node outlives its
			// process by two thirds of a session timeout to a whole one;
			// released at once, the next grant fell either side of a TTL
			// from run to run). A live waiter must be granted the lock
			// within one TTL of the release, a window the checker judges.
			settle(ctx, ttl/2)
			wait -= ttl / 2
			release := lin.Now()
			env.Available = append(env.Available, checker.Window{
				Name:  fmt.Sprintf("the TTL (%v) after the holder's release, a live waiter in line behind the silenced one", ttl),
				Start: release, End: release + int64(ttl)})
			if err := sys.slots[victim].Continue(); err != nil {
				return nil, 0, fmt.Errorf("continue client %d: %w", victim, err)
			}
			note += fmt.Sprintf(", waiting in line right behind %s, which released %v into the fault", st.Holder, ttl/2)
		}
		for i, d := range []time.Duration{wait, inCut} {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				k.Heal(context.Background(), sys, target)
				return nil, 0, ctx.Err()
			}
			if i == 0 && struckStopped {
				if err := sys.slots[victim].Continue(); err != nil && st.Kind != nemesis.ClientKill {
					return nil, 0, fmt.Errorf("continue client %d: %w", victim, err)
				}
			}
		}
		if st.Window != "" {
			// The window the step declares runs from the moment its fault
			// is whole (plus the grace) to the start of the heal.
			w := checker.Window{Start: whole + int64(nemesis.WindowGrace(env.TTL)), End: lin.Now()}
			switch st.Window {
			case nemesis.KeepsGranting:
				// Grants must come in it: the window gets no grace, as a
				// grant early in it is to the good.
				w.Name, w.Start = "minority-cut", whole
				env.Available = append(env.Available, w)
			case nemesis.GrantsNothing:
				w.Name = "majority-cut"
				env.QuorumLoss = append(env.QuorumLoss, w)
			}
		}
		healNote, err := k.Heal(ctx, sys, target)
		if err != nil {
			return nil, 0, fmt.Errorf("fault %d (%s %s): heal: %w", i, st.Kind, shown, err)
		}
		q, queued := triggers[i].(nemesis.InQueue)
		if isHeld && !held.InFault || queued && q.HoldsThrough {
			// A holder held up by a fault on a server goes on after the
			// heal, once another client has read the resource since the
			// fault began (or holdUp passed), and leaves after that
			// section.
			if err := sys.handOff(ctx, victim, begin, holdUp(env, k)); err != nil {
				return nil, 0, fmt.Errorf("continue client %d: %w", victim, err)
			}
		}
		lastHeal = time.Since(t0)
		notBefore = lastHeal + bound
		healed = lin.Now()
		inj.Note = note + "; " + healNote
		if _, role := nemesis.RoleOf(st.Target); role || st.Target == nemesis.HolderServerTarget {
			// The record keeps which server had the role when it struck.
			inj.Note = shown + ": " + inj.Note
		}
		text := fmt.Sprintf("%s %s for %v (%s; %s)", st.Kind, shown, time.Duration(st.Duration), note, healNote)
		if awaited != "" {
			text += "; awaited " + awaited
		}
		env.Rec.Record(lin.FaultEvent(begin, healed, inj, text))
		run.Injected[st.Kind]++
		env.Phase(PhaseFault)
	}
	if long := time.Duration(s.LongFor); long > 0 && healed != 0 {
		if err := sleepUntil(lastHeal + long); err != nil {
			return nil, 0, err
		}
		sys.shortWork()
	}
	if err := sleepUntil(time.Duration(s.Duration)); err != nil {
		return nil, 0, err
	}
	if rest := notBefore - time.Since(t0); healed != 0 && rest > 0 {
		// Short of the bound: go on until a grant after the last heal,
		// then for as long after it as the schedule leaves after its last
		// heal (a lock can come back late: TCP backs off its retransmits
		// during a cut), but never past the bound. No grant: the whole
		// bound, and a little slack keeps the checker from calling the
		// run too short to judge.
		tail := time.Duration(s.Duration) - s.Faults[len(s.Faults)-1].Heal()
		if g, ok := sys.grantAfter(ctx, healed, rest); ok {
			if err := sleepUntil(min(notBefore, time.Since(t0)+tail-time.Duration(lin.Now()-g))); err != nil {
				return nil, 0, err
			}
		} else if err := sleepUntil(notBefore + 100*time.Millisecond); err != nil {
			return nil, 0, err
		}
	}
	if ctx.Err() != nil {
		return nil, 0, ctx.Err()
	}
	end := lin.Now()
	env.Phase(PhaseAfter)
	sys.stopAll()
	if err := env.collect(sys.all); err != nil {
		return nil, 0, err
	}
	env.Phase(PhaseStop)
	run.Events = env.Rec.Events()
	return run, end, nil
}

// scheduleWork sets a worker's critical-section work for s: the
// schedule's own bounds, else explore's: each section lasts a tenth to a
// third of the TTL, so that a holder spends most of its time inside one,
// and a fault drawn at a random moment often lands on a holder
// mid-section, where a lock's flaws show. With sections of a few
// milliseconds (the scripted scenarios' default) 45 seconds of random
// client pauses and server restarts against redis-setnx-px found nothing,
// though the scripted scenarios break it.
func scheduleWork(s nemesis.Schedule) func(*WorkerSpec) {
	if s.WorkMax > 0 {
		return func(ws *WorkerSpec) { ws.WorkMin, ws.WorkMax = time.Duration(s.WorkMin), time.Duration(s.WorkMax) }
	}
	ttl := time.Duration(s.TTL)
	return func(ws *WorkerSpec) { ws.WorkMin, ws.WorkMax = ttl/10, ttl/3 }
}

// startWithRetry starts client id, trying up to three times: with a
// one-second TTL a lock's connect timeout is a fraction of a second, which
// a loaded 2-core machine sometimes misses before the client has done
// anything (its history is still empty, so a retry hides nothing).
func startWithRetry(ctx context.Context, env *Env, id int, edit func(*WorkerSpec)) (*Worker, error) {
	var err error
	for try := 0; try < 3; try++ {
		var w *Worker
		if w, err = env.StartWorker(ctx, id, env.Topo.Endpoints(), edit); err == nil {
			return w, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}
