package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/faults/netproxy"
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
	// Figures are what the faults measured (nemesis.Measurer), by name.
	Figures map[string]float64
	// NotStruck names the steps of a random schedule that could not strike
	// when their moment came (nemesis.ErrNotNow), and why.
	NotStruck []string
	Elapsed   time.Duration
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
	run, end, err := runSchedule(ctx, env, s, nil, logf)
	if err != nil {
		return nil, err
	}
	run.Decision = checker.Decide(checker.Input{Events: run.Events, TTL: ttl, End: end,
		QuorumLoss: env.QuorumLoss, Available: env.Available, Reach: env.Reach,
		Minimum: checker.DefaultMinimum, Timeout: env.CheckTimeout})
	run.Elapsed = time.Since(start)
	return run, nil
}

// ScheduleTopology is the lock's servers as s's faults need them, each
// fault's kind saying what it needs (nemesis.Shaper): under the movable
// clock for a clock jump, on hosts of their own for network faults or a
// fail-over (which moves an address between hosts), with the replica a
// fail-over promotes.
func ScheduleTopology(spec impls.Spec, s nemesis.Schedule) (topology.Declaration, error) {
	named, err := topology.Lookup(s.Topology)
	if err != nil {
		return topology.Declaration{}, err
	}
	d, err := spec.Backend.On(named)
	if err != nil {
		return topology.Declaration{}, err
	}
	for _, st := range append(slices.Clone(s.Standing), s.Faults...) {
		d = nemesis.Shape(st.Kind, d)
	}
	return d, nil
}

// runSchedule runs s on env's servers: the workers, their sections sec's
// when not nil, the faults at their times, the end of the run. It returns
// the merged history and when recording stopped; the caller has the
// checker judge it. It is the one
// orchestrator of a schedule's walk: it chooses each step's trigger
// handler once (handlerOf) and calls each in turn; the nemesis answers
// what a step means and acts through its kinds, and never drives the run.
func runSchedule(ctx context.Context, env *Env, s nemesis.Schedule, sec sections, logf func(string, ...any)) (*ScheduleRun, int64, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	r := &scheduleRun{env: env, s: s, ttl: time.Duration(s.TTL), logf: logf,
		sys: &system{env: env, next: s.Clients, work: scheduleSections(sec, scheduleThink(s, scheduleWork(s)))},
		run: &ScheduleRun{Schedule: s, Injected: map[string]int{}, Figures: map[string]float64{}}}
	defer r.sys.stopAll()
	if err := r.reach(); err != nil {
		return nil, 0, err
	}
	if needsProxies(s) {
		r.sys.net = netproxy.New()
		defer r.sys.net.Close()
	}
	handlers, err := handlersOf(s)
	if err != nil {
		return nil, 0, err
	}
	settlers, err := settlersOf(s)
	if err != nil {
		return nil, 0, err
	}
	// Only the first step's trigger can stop a client at a failpoint
	// (Validate): that client alone takes the first grant and stops
	// there; the others wait for "go". A schedule without faults starts
	// as one whose first step comes at a moment: nobody stops.
	first := triggerHandler(atTime{})
	if len(handlers) > 0 {
		first = handlers[0]
	}
	defer r.healStanding()
	if err := r.strikeStanding(ctx); err != nil {
		return nil, 0, err
	}
	if err := r.startClients(ctx, first, settlers); err != nil {
		return nil, 0, err
	}
	if err := first.warmUp(ctx, r); err != nil {
		return nil, 0, err
	}
	env.Phase(PhaseWarmUp)
	r.t0 = time.Now()
	for i, st := range s.Faults {
		if err := r.strike(ctx, i, st, handlers[i]); err != nil {
			return nil, 0, err
		}
	}
	end, err := r.finish(ctx)
	if err != nil {
		return nil, 0, err
	}
	return r.run, end, nil
}

// scheduleRun is one schedule's run in progress on env's servers.
type scheduleRun struct {
	env  *Env
	sys  *system
	s    nemesis.Schedule
	ttl  time.Duration
	logf func(string, ...any)
	run  *ScheduleRun
	t0   time.Time // the run's time zero, the steps' At counts from it
	// A heal can take longer than planned (a restarted server must
	// answer first). No fault starts less than the liveness bound after
	// the last heal really finished, and the run does not end before
	// that either unless some client was granted the lock since: the
	// checker then always sees a grant after every heal, or its whole
	// bound without one, and a stuck verdict is the lock's, never a fault
	// that came too soon or a run that ended too early.
	notBefore, lastHeal time.Duration
	healed              int64 // when the last heal finished (monotonic ns), 0 before
	// stopped is the client the first step's trigger stopped at its
	// failpoint, and when it stood there; zero when none.
	stopped stoppedClient
}

// startClients starts s.Clients workers, the one first stops armed at its
// failpoint, and settles the servers before any client may be granted the
// lock; it lets go every client that need not wait for the warm-up.
//
// The client stopped at a failpoint waits for "go" like the rest, and
// goes only once every worker is up: workers start one after another,
// and a guest's (a JVM, Node.js, Python) takes a few hundred milliseconds
// each on a loaded machine. Let go at its own "ready", the stopped
// client held the lock while the other three started, and the fault
// struck when its 1 s lease was nearly over or already gone (a holder
// "crashed" 1.6 s after its grant; issue 44): the run no longer tested
// what its scenario says.
func (r *scheduleRun) startClients(ctx context.Context, first triggerHandler, settlers []settleStep) error {
	victim, failpoint := first.stopped()
	work := r.sys.work
	for id := 0; id < r.s.Clients; id++ {
		w, err := r.sys.start(ctx, id, func(ws *WorkerSpec) {
			work(ws)
			if failpoint != "" && id == victim {
				ws.Arm = []string{failpoint}
			}
			ws.WaitForGo = failpoint != "" || len(settlers) > 0
		})
		if err != nil {
			return err
		}
		r.sys.slots = append(r.sys.slots, w)
		r.sys.all = append(r.sys.all, w)
	}
	r.env.Phase(PhaseWorkers)
	if len(settlers) == 0 {
		if failpoint == "" {
			return nil
		}
		return r.sys.slots[victim].Go()
	}
	if err := settleAll(ctx, r.env, r.sys, settlers, r.logf); err != nil {
		return err
	}
	for i, w := range r.sys.slots {
		// With a failpoint, the victim alone goes now (the first
		// trigger's warm-up lets the rest go once it stands there).
		if failpoint == "" || i == victim {
			if err := w.Go(); err != nil {
				return err
			}
		}
	}
	return nil
}

// strike is one step's fault from its trigger to its record.
type strike struct {
	i    int
	st   nemesis.Step
	kind nemesis.Kind
	// target is what the kind strikes and heals (a role, the holder,
	// resolved); shown is how the log and the record name it.
	target, shown string
	awaited       string // what the step awaited and saw before it struck
	note          string // what the inject and the trigger's handler did
	begin, whole  int64  // when the inject began, when the fault was whole
	healing       int64  // when the heal began
	wholeAt       time.Time
}

// duration is how long the step's fault holds.
func (f *strike) duration() time.Duration { return time.Duration(f.st.Duration) }

// errorf wraps err with the step it failed.
func (f *strike) errorf(err error) error {
	return fmt.Errorf("fault %d (%s %s): %w", f.i, f.st.Kind, f.shown, err)
}

// strike runs step i: waits for its moment, aims, injects, waits out the
// fault as its trigger asks, records the step's window, heals and records
// the fault.
func (r *scheduleRun) strike(ctx context.Context, i int, st nemesis.Step, h triggerHandler) error {
	if err := r.sleepUntil(ctx, max(time.Duration(st.At), r.notBefore)); err != nil {
		return err
	}
	// Before the first fault (a schedule's lead) and between faults is
	// the run going on between them.
	r.env.Phase(PhaseAfter)
	k, err := nemesis.Lookup(st.Kind)
	if err != nil {
		return err
	}
	f := &strike{i: i, st: st, kind: k, target: st.Target, shown: st.Target}
	if err := h.aim(ctx, r, f); err != nil {
		return r.notStruck(f, h, err)
	}
	inj := r.sys.injection(st, f.target)
	inj.Awaited = f.awaited
	f.begin = lin.Now()
	if f.note, err = k.Inject(ctx, r.sys, f.target); err != nil {
		return r.notStruck(f, h, fmt.Errorf("inject: %w", err))
	}
	r.logf("fault %d/%d: %s %s for %v", i+1, len(r.s.Faults), st.Kind, f.shown, f.duration())
	f.whole = lin.Now() // the cut is in place on every host only now
	f.wholeAt = time.Now()
	if _, failpoint := h.stopped(); failpoint != "" {
		f.note += ", at failpoint " + failpoint
	}
	// The heal comes the step's duration after the fault was in place,
	// even if injecting it took a while (a SIGSTOP waits for every
	// thread); the trigger's handler waits it out.
	if err := h.during(ctx, r, f); err != nil {
		return err
	}
	r.window(f)
	f.healing = lin.Now()
	healNote, err := k.Heal(ctx, r.sys, f.target)
	if err != nil {
		return f.errorf(fmt.Errorf("heal: %w", err))
	}
	if err := h.healed(ctx, r, f); err != nil {
		return err
	}
	if m, ok := k.(nemesis.Measurer); ok {
		for name, v := range m.Measured(r.sys, f.target) {
			r.run.Figures[name] = v
		}
	}
	r.lastHeal = time.Since(r.t0)
	r.notBefore = r.lastHeal + checker.Bound(r.ttl)
	r.healed = lin.Now()
	r.record(f, inj, healNote)
	return nil
}

// notStruck ends step f that could not aim or inject. A random schedule's
// step drawn for a moment the servers are not in the state it needs (no
// master mid fail-over, a master with no replica online after a kill) is
// skipped and named in the run (ScheduleRun.NotStruck), as a nemesis that
// finds nothing to strike logs it and goes on: the faults before it struck
// the servers into that state, and the run goes on testing the lock. A
// fixed schedule's step must strike: there, as for every other error, the
// run fails. A client the step's trigger stopped at its failpoint goes on.
func (r *scheduleRun) notStruck(f *strike, h triggerHandler, err error) error {
	if r.s.Name != "" || !errors.Is(err, nemesis.ErrNotNow) {
		return f.errorf(err)
	}
	if slot, failpoint := h.stopped(); failpoint != "" {
		if cerr := r.sys.slots[slot].Continue(); cerr != nil {
			return f.errorf(fmt.Errorf("%w; continue client %d: %w", err, slot, cerr))
		}
	}
	why := fmt.Sprintf("fault %d (%s %s): %v", f.i, f.st.Kind, f.shown, err)
	r.logf("fault %d/%d: not struck: %s", f.i+1, len(r.s.Faults), why)
	r.run.NotStruck = append(r.run.NotStruck, why)
	return nil
}

// window records the window f's step declares: from the moment its fault
// is whole (plus the grace) to the start of the heal.
func (r *scheduleRun) window(f *strike) {
	if f.st.Window == "" {
		return
	}
	w := checker.Window{Start: f.whole + int64(nemesis.WindowGrace(r.env.TTL)), End: lin.Now()}
	switch f.st.Window {
	case nemesis.KeepsGranting:
		// Grants must come in it: the window gets no grace, as a grant
		// early in it is to the good.
		w.Name, w.Start = "minority-cut", f.whole
		r.env.Available = append(r.env.Available, w)
	case nemesis.GrantsNothing:
		w.Name = "majority-cut"
		r.env.QuorumLoss = append(r.env.QuorumLoss, w)
	}
}

// record puts f's fault, healed, on the history.
func (r *scheduleRun) record(f *strike, inj lin.Injection, healNote string) {
	inj.Note = f.note + "; " + healNote
	// Read off the histories after the heal, not before the inject: the
	// reading would delay the strike it measures.
	stopped := stoppedClient{}
	if f.i == 0 {
		stopped = r.stopped // later steps find it gone on from its failpoint
	}
	inj.HeldSince = r.sys.heldSince(inj.Clients, f.begin, stopped)
	// A fail-over's record of what the master had and the promoted
	// replica had, read from the servers by the fault itself.
	inj.Promotion = nemesis.TakePromotion(r.sys, f.target)
	inj.Whole, inj.Healing = f.whole, f.healing
	if _, role := nemesis.RoleOf(f.st.Target); role || f.st.Target == nemesis.HolderServerTarget {
		// The record keeps which server had the role when it struck.
		inj.Note = f.shown + ": " + inj.Note
	}
	text := fmt.Sprintf("%s %s for %v (%s; %s)", f.st.Kind, f.shown, f.duration(), f.note, healNote)
	if inj.Promotion != nil {
		text += "; " + inj.Promotion.String()
	}
	if f.awaited != "" {
		text += "; awaited " + f.awaited
	}
	r.env.Rec.Record(lin.FaultEvent(f.begin, r.healed, inj, text))
	r.run.Injected[f.st.Kind]++
	r.env.Phase(PhaseFault)
}

// finish runs the workload to the schedule's end, and on past it until
// the checker can judge the last heal, then stops the workers and merges
// their histories. It returns when recording stopped.
func (r *scheduleRun) finish(ctx context.Context) (int64, error) {
	if long := time.Duration(r.s.LongFor); long > 0 && r.healed != 0 {
		if err := r.sleepUntil(ctx, r.lastHeal+long); err != nil {
			return 0, err
		}
		r.sys.shortWork()
	}
	if err := r.sleepUntil(ctx, time.Duration(r.s.Duration)); err != nil {
		return 0, err
	}
	if err := r.awaitGrant(ctx); err != nil {
		return 0, err
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	end := lin.Now()
	r.env.Phase(PhaseAfter)
	r.sys.stopAll()
	if err := r.env.Collect(r.sys.all); err != nil {
		return 0, err
	}
	r.env.Phase(PhaseStop)
	r.run.Events = r.env.Rec.Events()
	return end, nil
}

// awaitGrant goes on, when the run is short of the bound after its last
// heal, until a grant after that heal, then for as long after it as the
// schedule leaves after its last heal (a lock can come back late: TCP
// backs off its retransmits during a cut), but never past the bound. No
// grant: the whole bound, and a little slack keeps the checker from
// calling the run too short to judge.
func (r *scheduleRun) awaitGrant(ctx context.Context) error {
	rest := r.notBefore - time.Since(r.t0)
	if r.healed == 0 || rest <= 0 {
		return nil
	}
	tail := time.Duration(r.s.Duration) - r.s.Faults[len(r.s.Faults)-1].Heal()
	if g, ok := r.sys.grantAfter(ctx, r.healed, rest); ok {
		return r.sleepUntil(ctx, min(r.notBefore, time.Since(r.t0)+tail-time.Duration(lin.Now()-g)))
	}
	return r.sleepUntil(ctx, r.notBefore+100*time.Millisecond)
}

// sleepUntil sleeps until at after the run's time zero, or until ctx ends.
func (r *scheduleRun) sleepUntil(ctx context.Context, at time.Duration) error {
	select {
	case <-time.After(time.Until(r.t0.Add(at))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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

// scheduleThink adds s's think time between a client's sections to work.
func scheduleThink(s nemesis.Schedule, work func(*WorkerSpec)) func(*WorkerSpec) {
	if s.Think == 0 {
		return work
	}
	return func(ws *WorkerSpec) {
		work(ws)
		ws.Think = time.Duration(s.Think)
	}
}

// scheduleSections makes sec, when not nil, what every section of work
// does (a sale of a stock).
func scheduleSections(sec sections, work func(*WorkerSpec)) func(*WorkerSpec) {
	if sec == nil {
		return work
	}
	return func(ws *WorkerSpec) {
		work(ws)
		sec.edit(ws)
	}
}

// start starts client id, trying up to three times: with a
// one-second TTL a lock's connect timeout is a fraction of a second, which
// a loaded 2-core machine sometimes misses before the client has done
// anything (its history is still empty, so a retry hides nothing).
func (x *system) start(ctx context.Context, id int, edit func(*WorkerSpec)) (*Worker, error) {
	servers, err := x.endpoints(id)
	if err != nil {
		return nil, err
	}
	env := x.env
	for try := 0; try < 3; try++ {
		var w *Worker
		if w, err = env.StartWorker(ctx, id, servers, edit); err == nil {
			return w, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}
