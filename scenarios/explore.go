package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/resource"
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
		return nil, fmt.Errorf("explore runs each client as a process of its own, and %s's %v", spec.Name, errExploreInProcess)
	}
	ttl := time.Duration(s.TTL)
	needs := cluster.Needs{
		RedisNodes: spec.Backend.RedisNodes, ZooKeeper: spec.Backend.ZooKeeper,
		Postgres: spec.Backend.Postgres, Resource: true,
	}.Merge(scheduleNeeds(s))
	start := time.Now()
	topo, err := cluster.Start(ctx, needs, cluster.External{})
	if err != nil {
		return nil, err
	}
	defer topo.Close()
	workDir, err := os.MkdirTemp("", "locklab-explore-")
	if err != nil {
		return nil, fmt.Errorf("make run dir: %w", err)
	}
	defer os.RemoveAll(workDir)
	env := &Env{
		Options: Options{Impl: spec, Fencing: s.Fencing, Seed: s.Seed, Clients: s.Clients, TTL: ttl},
		Topo:    topo, Rec: lin.NewRecorder(nil),
		Key: "locklab-" + strconv.FormatInt(s.Seed, 36), workDir: workDir,
	}
	env.defaults()
	counter := resource.NewVia(topo.ResourceAddr, env.Key, topo.Dialer())
	err = counter.Reset(ctx)
	counter.Close()
	if err != nil {
		return nil, err
	}
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

// scheduleNeeds is what a schedule's faults need beyond the lock's own
// servers and the resource.
func scheduleNeeds(s nemesis.Schedule) cluster.Needs {
	var needs cluster.Needs
	for _, st := range s.Faults {
		if st.Kind == nemesis.ServerClockJump {
			needs.ClockShift = true
		}
		// Only a schedule with network faults (or a fail-over, which
		// moves an address) puts servers and clients on hosts of their
		// own: namespaces cost time to make.
		needs.Hosts = needs.Hosts || nemesis.NeedsHosts(st.Kind)
		needs.Replica = needs.Replica || st.Kind == nemesis.FailOver
	}
	return needs
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
	sys := &exploreSystem{env: env, next: s.Clients, work: work}
	defer sys.stopAll()
	// A first step that waits for a failpoint: its target alone takes the
	// first grant and stops there; the others wait for "go".
	trigger, victim := "", -1
	if len(s.Faults) > 0 && s.Faults[0].After != "" {
		trigger = s.Faults[0].After
		var err error
		if victim, err = nemesis.ClientSlot(s.Faults[0].Stopped()); err != nil {
			return nil, 0, fmt.Errorf("fault 0: %w", err)
		}
	}
	for id := 0; id < s.Clients; id++ {
		w, err := startExploreWorker(ctx, env, id, func(ws *WorkerSpec) {
			work(ws)
			switch {
			case trigger != "" && id == victim:
				ws.Arm = []string{trigger}
			case trigger != "":
				ws.WaitForGo = true
			}
		})
		if err != nil {
			return nil, 0, err
		}
		sys.slots = append(sys.slots, w)
		sys.all = append(sys.all, w)
	}
	if trigger != "" {
		if _, err := sys.slots[victim].Await(ctx, "failpoint "+trigger, 30*time.Second+5*ttl); err != nil {
			return nil, 0, err
		}
		if err := sys.goOthers(ctx, victim, s.Faults[0]); err != nil {
			return nil, 0, err
		}
	}
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
	var notBefore time.Duration
	var healed int64 // when the last heal finished (monotonic ns)
	for i, st := range s.Faults {
		if err := sleepUntil(max(time.Duration(st.At), notBefore)); err != nil {
			return nil, 0, err
		}
		k, err := nemesis.Lookup(st.Kind)
		if err != nil {
			return nil, 0, err
		}
		// A fault aimed at the holder strikes the client in its section
		// now; the history names which one.
		target, shown := st.Target, st.Target
		if target == nemesis.HolderTarget {
			slot, how := sys.holder(ctx, ttl)
			target = fmt.Sprintf("client-%d", slot)
			shown = "holder " + target + how
		}
		begin := lin.Now()
		note, err := k.Inject(ctx, sys, target)
		if err != nil {
			return nil, 0, fmt.Errorf("fault %d (%s %s): inject: %w", i, st.Kind, shown, err)
		}
		logf("fault %d/%d: %s %s for %v", i+1, len(s.Faults), st.Kind, shown, time.Duration(st.Duration))
		whole := lin.Now() // the cut is in place on every host only now
		if st.After != "" {
			note += ", at failpoint " + st.After
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
		if st.After != "" && st.Holder == "" && nemesis.IsNetwork(st.Kind) {
			inCut = min(ttl, wait/2)
			wait -= inCut
		}
		if st.Queue {
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
			if i == 0 && st.After != "" && st.Holder == "" {
				if err := sys.slots[victim].Continue(); err != nil && st.Kind != nemesis.ClientKill {
					return nil, 0, fmt.Errorf("continue client %d: %w", victim, err)
				}
			}
		}
		if cut, leaves := nemesis.CutLeavesQuorum(st, len(sys.LockServers())); cut && s.Name != "" {
			// A fixed schedule's cut of some nodes is a window the checker
			// judges: grants must go on while a quorum stays reachable,
			// and none may come while it does not. It starts once the cut
			// is whole, plus 200ms for a grant whose replies were already
			// on their way, and ends as the heal begins. A random schedule
			// records none: its cuts may be too short for the lock to
			// grant at all, and explore judges safety and liveness only.
			w := checker.Window{Start: whole + int64(200*time.Millisecond), End: lin.Now()}
			if leaves {
				w.Name = "minority-cut"
				env.Available = append(env.Available, w)
			} else {
				w.Name = "majority-cut"
				env.QuorumLoss = append(env.QuorumLoss, w)
			}
		}
		healNote, err := k.Heal(ctx, sys, target)
		if err != nil {
			return nil, 0, fmt.Errorf("fault %d (%s %s): heal: %w", i, st.Kind, shown, err)
		}
		if st.After != "" && st.Holder != "" && !st.Queue {
			// A holder held up by a fault on a server goes on after the
			// heal, once another client has read the resource since the
			// fault began (or half a TTL passed), and leaves after that
			// section.
			if err := sys.handOff(ctx, victim, begin); err != nil {
				return nil, 0, fmt.Errorf("continue client %d: %w", victim, err)
			}
		}
		notBefore = time.Since(t0) + bound
		healed = lin.Now()
		env.Rec.Record(lin.Event{Kind: lin.Fault, Time: begin, End: healed,
			Text: fmt.Sprintf("%s %s for %v (%s; %s)", st.Kind, shown, time.Duration(st.Duration), note, healNote)})
		run.Injected[st.Kind]++
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
	sys.stopAll()
	if err := env.collect(sys.all); err != nil {
		return nil, 0, err
	}
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

// startExploreWorker starts client id, trying up to three times: with a
// one-second TTL a lock's connect timeout is a fraction of a second, which
// a loaded 2-core machine sometimes misses before the client has done
// anything (its history is still empty, so a retry hides nothing).
func startExploreWorker(ctx context.Context, env *Env, id int, edit func(*WorkerSpec)) (*Worker, error) {
	var err error
	for try := 0; try < 3; try++ {
		var w *Worker
		if w, err = env.StartWorker(ctx, id, env.Topo.RedisAddrs, edit); err == nil {
			return w, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

var errExploreInProcess = errors.New("clients share one process, so no client fault applies and no worker can run it")

// exploreSystem is the running system the nemesis acts on.
type exploreSystem struct {
	env   *Env
	mu    sync.Mutex
	slots []*Worker // the process now in each client slot
	all   []*Worker // every worker started, killed ones too (their histories count)
	next  int       // the next client id
	work  func(*WorkerSpec)
	// sections follows each worker's history, for faults aimed at the
	// holder (see holder).
	sections map[*Worker]*sectionWatch
}

func (x *exploreSystem) Client(slot int) (nemesis.Process, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slot < 0 || slot >= len(x.slots) {
		return nil, fmt.Errorf("no client slot %d", slot)
	}
	return x.slots[slot].proc, nil
}

func (x *exploreSystem) ReplaceClient(ctx context.Context, slot int) (int, error) {
	x.mu.Lock()
	id := x.next
	x.next++
	x.mu.Unlock()
	// A new id: the killed process's sections stay in the history under
	// its own, with the one it died in left unknown.
	w, err := startExploreWorker(ctx, x.env, id, x.work)
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.slots[slot] = w
	x.all = append(x.all, w)
	return id, nil
}

func (x *exploreSystem) Server(name string) (*cluster.Node, error) {
	n := x.env.Topo.Node(name)
	if n == nil {
		return nil, fmt.Errorf("no server %q in this run", name)
	}
	return n, nil
}

func (x *exploreSystem) TTL() time.Duration { return x.env.TTL }

func (x *exploreSystem) Clients() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.slots)
}

func (x *exploreSystem) ClientHost(slot int) (*hosts.Host, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slot < 0 || slot >= len(x.slots) {
		return nil, fmt.Errorf("no client slot %d", slot)
	}
	return x.host(fmt.Sprintf("client-%d", x.slots[slot].ID))
}

func (x *exploreSystem) ServerHost(name string) (*hosts.Host, error) { return x.host(name) }

func (x *exploreSystem) host(name string) (*hosts.Host, error) {
	if x.env.Topo.Net == nil {
		return nil, errors.New("this run has no hosts of its own, so no network fault can strike it")
	}
	h := x.env.Topo.Net.Host(name)
	if h == nil {
		return nil, fmt.Errorf("no host %q in this run", name)
	}
	return h, nil
}

func (x *exploreSystem) LockServers() []string {
	var out []string
	for _, n := range x.env.Topo.Nodes() {
		if n != x.env.Topo.Resource {
			out = append(out, n.Name)
		}
	}
	return out
}

// goOthers lets every client but the one stopped at first's failpoint
// start contending. For a queue step they join the lock's line in a known
// order, while the stopped client holds the lock: first's target, the
// waiter it strikes, then, once it had time to join, the rest. Joining a
// line is one request (a queue entry, a sequential node) sent at once.
func (x *exploreSystem) goOthers(ctx context.Context, stopped int, first nemesis.Step) error {
	waiter := -1
	if first.Queue {
		var err error
		if waiter, err = nemesis.ClientSlot(first.Target); err != nil {
			return fmt.Errorf("queue step: %w", err)
		}
		if err := x.slots[waiter].Go(); err != nil {
			return err
		}
		settle(ctx, queueSettle(x.env))
	}
	for i, w := range x.slots {
		if i != stopped && i != waiter {
			if err := w.Go(); err != nil {
				return err
			}
		}
	}
	if first.Queue {
		settle(ctx, queueSettle(x.env))
	}
	return nil
}

// handOff lets the client in slot go on from its failpoint once another
// client has read the resource after since, or half a TTL passed from now,
// and leave the run after that section.
func (x *exploreSystem) handOff(ctx context.Context, slot int, since int64) error {
	x.mu.Lock()
	holder := x.slots[slot]
	r := &faultRun{env: x.env, workers: []*Worker{holder}}
	for _, w := range x.all {
		if w != holder {
			r.workers = append(r.workers, w)
		}
	}
	x.mu.Unlock()
	r.victim = holder
	return r.handOffSince(ctx, since, holder.ContinueThenLeave)
}

// holder returns the slot of the client inside its critical section (its
// history's last grant has no release after it), waiting up to within for
// one; when two are (a lock that failed), the one granted first. When no
// client enters its section in time (a stuck lock), it returns the client
// granted last, or slot 0, and says so in how.
func (x *exploreSystem) holder(ctx context.Context, within time.Duration) (slot int, how string) {
	// The slots do not change while it waits: faults do not overlap, so no
	// client is being replaced.
	x.mu.Lock()
	if x.sections == nil {
		x.sections = map[*Worker]*sectionWatch{}
	}
	var watches []*sectionWatch
	for _, w := range x.slots {
		sw := x.sections[w]
		if sw == nil {
			sw = &sectionWatch{tail: historyTail{path: w.Spec.History}}
			x.sections[w] = sw
		}
		watches = append(watches, sw)
	}
	x.mu.Unlock()
	deadline := time.Now().Add(within)
	for {
		in, last := -1, -1
		for i, sw := range watches {
			sw.update()
			if sw.in && (in < 0 || sw.granted < watches[in].granted) {
				in = i
			}
			if sw.granted != 0 && (last < 0 || sw.granted > watches[last].granted) {
				last = i
			}
		}
		if in >= 0 {
			return in, ""
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if last < 0 {
				return 0, fmt.Sprintf(" (no client in its section within %v, none granted yet)", within)
			}
			return last, fmt.Sprintf(" (no client in its section within %v: the one granted last)", within)
		}
		time.Sleep(2 * time.Millisecond)
	}
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
func (x *exploreSystem) grantAfter(ctx context.Context, after int64, bound time.Duration) (int64, bool) {
	x.mu.Lock()
	all := append([]*Worker(nil), x.all...)
	x.mu.Unlock()
	return waitFor(ctx, all, lin.Acquired, after, bound)
}

// stopAll stops every worker still running (each finishes its section).
func (x *exploreSystem) stopAll() {
	x.mu.Lock()
	all := append([]*Worker(nil), x.all...)
	for _, sw := range x.sections {
		sw.tail.close()
	}
	x.sections = nil
	x.mu.Unlock()
	r := &faultRun{env: x.env, workers: all}
	r.stopWorkers()
}

// ExploreOptions configure `bench explore`.
type ExploreOptions struct {
	Impl     impls.Spec
	Fencing  bool
	Seed     int64
	TTL      time.Duration
	Clients  int
	Duration time.Duration
	// Kinds restricts the fault kinds (default: every kind that applies).
	Kinds []string
	// Fixed names a fixed schedule (nemesis.Fixed) to run in place of a
	// generated one.
	Fixed string
	// Replays is how many times the shrinker replays each candidate; it
	// still fails if any replay fails.
	Replays int
	// ShrinkBudget bounds the time spent shrinking.
	ShrinkBudget time.Duration
	OutDir       string // where a counterexample is written
	Logf         func(string, ...any)
}

// Exploration is what `bench explore` found.
type Exploration struct {
	Schedule nemesis.Schedule  // the generated schedule
	Skipped  map[string]string // kinds that do not apply, and why
	Run      *ScheduleRun      // the exploring run
	// On a counterexample (unsafe or stuck): the minimal schedule that
	// still failed, its failing replay, what shrinking did, and the files
	// written.
	Minimal      *nemesis.Schedule
	MinimalRun   *ScheduleRun
	Shrink       nemesis.ShrinkStats
	ScheduleFile string
	HistoryFile  string
	HTMLFile     string
}

// Suspects returns the indices of the schedule's faults that a failing
// run's history points at, most likely first, for the shrinker to try
// alone: for stuck, the fault after whose heal no grant came; for unsafe,
// the last fault that began before the second holder of the first lost
// update entered (two sections that wrote the same value), then the one
// before it.
func Suspects(r *ScheduleRun) []int {
	var faults []lin.Event
	for _, e := range r.Events {
		if e.Kind == lin.Fault {
			faults = append(faults, e)
		}
	}
	// The runner records one fault event per step, in order.
	if len(faults) != len(r.Schedule.Faults) {
		return nil
	}
	switch r.Decision.Verdict {
	case checker.Stuck:
		for i, f := range faults {
			if f.Text == r.Decision.Liveness.Stuck {
				return []int{i}
			}
		}
	case checker.Unsafe:
		type op struct{ call, ret int64 }
		calls := map[[2]int64]int64{} // (client, op) -> call time
		written := map[int64]op{}     // value written -> first section that wrote it
		lost := int64(-1)
		for _, e := range r.Events {
			switch {
			case e.Kind == lin.Call:
				calls[[2]int64{int64(e.Client), e.Op}] = e.Time
			case e.Kind == lin.Return && e.Status == lin.OK:
				this := op{calls[[2]int64{int64(e.Client), e.Op}], e.Time}
				if prev, dup := written[e.Value]; dup {
					// The later of the two entries is when the lock let a
					// second holder in: the fault came before it.
					t := max(prev.call, this.call)
					if lost < 0 || t < lost {
						lost = t
					}
					continue
				}
				written[e.Value] = this
			}
		}
		if lost < 0 {
			return nil
		}
		var out []int
		for i := len(faults) - 1; i >= 0 && len(out) < 2; i-- {
			if faults[i].Time <= lost {
				out = append(out, i)
			}
		}
		return out
	}
	return nil
}

// Failed reports whether a verdict is a counterexample worth shrinking.
func Failed(v checker.Verdict) bool { return v == checker.Unsafe || v == checker.Stuck }

// ErrNoKind is PlanExplore's error when none of the kinds asked for can
// reach the lock: `bench explore -impl all` skips such a lock, saying why.
var ErrNoKind = errors.New("no fault kind asked for applies")

// PlanExplore draws the schedule an exploration would run, with the kinds
// it skipped and why; it starts nothing.
func PlanExplore(o ExploreOptions) (nemesis.Schedule, map[string]string, error) {
	if o.Clients <= 0 {
		o.Clients = 4
	}
	topo := nemesis.ExploreTopology(o.Impl, o.Clients, o.Kinds)
	ks, skipped, err := nemesis.Applicable(o.Impl, topo, o.Kinds)
	if err != nil {
		return nemesis.Schedule{}, nil, err
	}
	if o.Impl.Backend.InProcess {
		return nemesis.Schedule{}, skipped, fmt.Errorf("%s cannot be explored: its %v", o.Impl.Name, errExploreInProcess)
	}
	if o.Fencing && !o.Impl.Caps.Fencing {
		return nemesis.Schedule{}, skipped, fmt.Errorf("%s issues no fencing tokens, so -fencing cannot apply", o.Impl.Name)
	}
	if o.Fixed != "" {
		f, ok := nemesis.Fixed[o.Fixed]
		if !ok {
			return nemesis.Schedule{}, skipped, fmt.Errorf("unknown fixed schedule %q; valid: %v", o.Fixed, nemesis.FixedNames())
		}
		s := f(o.Impl.Name, o.Fencing, o.TTL)
		s.Seed, s.Clients = o.Seed, o.Clients
		return s, skipped, s.Validate()
	}
	if len(ks) == 0 {
		var why []string
		for _, k := range slices.Sorted(maps.Keys(skipped)) {
			why = append(why, k+": "+skipped[k])
		}
		return nemesis.Schedule{}, skipped, fmt.Errorf("%w to %s (%s)", ErrNoKind, o.Impl.Name, strings.Join(why, "; "))
	}
	s := nemesis.Generate(nemesis.Plan{Seed: o.Seed, Impl: o.Impl.Name, Fencing: o.Fencing, TTL: o.TTL,
		Clients: o.Clients, Duration: o.Duration, Topology: topo, Kinds: ks})
	return s, skipped, nil
}

// Explore draws a schedule from the seed, runs it, and on a counterexample
// shrinks it to a minimal schedule that still fails, written with the
// history and timeline of its failing replay.
func Explore(ctx context.Context, o ExploreOptions) (*Exploration, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Replays <= 0 {
		o.Replays = 3
	}
	s, skipped, err := PlanExplore(o)
	if err != nil {
		return nil, err
	}
	x := &Exploration{Schedule: s, Skipped: skipped}
	o.Logf("exploring %s for %v with %d faults (seed %d)", s.Impl, time.Duration(s.Duration), len(s.Faults), s.Seed)
	if x.Run, err = RunSchedule(ctx, s, o.Logf); err != nil {
		return nil, err
	}
	class := x.Run.Decision.Verdict
	if !Failed(class) {
		return x, nil
	}
	o.Logf("%s: %s; shrinking (at most %v, %d replays per candidate)", class, x.Run.Decision.Detail, o.ShrinkBudget, o.Replays)
	failing := x.Run
	bound := checker.Bound(o.TTL)
	minimal, st, err := nemesis.Shrink(ctx, s, bound, o.ShrinkBudget, Suspects(x.Run), func(ctx context.Context, c nemesis.Schedule) (bool, error) {
		for i := 0; i < o.Replays; i++ {
			r, err := RunSchedule(ctx, c, nil)
			if err != nil {
				return false, err
			}
			o.Logf("candidate of %d faults, %v: replay %d %s", len(c.Faults), time.Duration(c.Duration).Round(time.Second), i+1, r.Decision.Verdict)
			if r.Decision.Verdict == class {
				failing = r
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("shrink: %w", err)
	}
	minimal.Verdict = string(class)
	x.Minimal, x.Shrink = &minimal, st
	// The run that failed last is the minimal schedule's (or, if no
	// candidate failed, the original's).
	x.MinimalRun = failing
	if err := x.write(o.OutDir); err != nil {
		return nil, err
	}
	return x, nil
}

// write saves the minimal schedule, the history of its failing replay and
// porcupine's timeline (whose faults row is the schedule's).
func (x *Exploration) write(dir string) error {
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "locklab", "explore")
	}
	name := x.Minimal.Impl
	if x.Minimal.Fencing {
		name += "-fenced"
	}
	if x.Minimal.Name != "" {
		name += "-" + x.Minimal.Name
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed%d", name, x.Minimal.Seed))
	var err error
	if x.ScheduleFile, x.HistoryFile, x.HTMLFile, err = WriteCounterexample(base, *x.Minimal, x.MinimalRun); err != nil {
		return err
	}
	return nil
}

// WriteCounterexample writes base.schedule.json, base.history.jsonl and,
// for an unsafe or stuck run, porcupine's timeline base.html; it returns
// their paths.
func WriteCounterexample(base string, s nemesis.Schedule, r *ScheduleRun) (sched, hist, html string, err error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", "", "", err
	}
	sched = base + ".schedule.json"
	if err := s.Write(sched); err != nil {
		return "", "", "", err
	}
	hist = base + ".history.jsonl"
	if err := lin.WriteEvents(hist, r.Events); err != nil {
		return "", "", "", err
	}
	// A stuck run's timeline shows it too: the faults row, then no grant.
	if Failed(r.Decision.Verdict) {
		if html, err = r.Decision.Result.WriteHTML(base + ".html"); err != nil {
			return "", "", "", err
		}
	}
	return sched, hist, html, nil
}

// Tally lists injected faults as "kind N" pairs, sorted by kind.
func Tally(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return out
}
