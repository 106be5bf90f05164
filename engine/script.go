package engine

import (
	"context"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// Script is a scripted run: worker processes contend for the lock while
// its hooks act at chosen moments. A scenario names one
// (scenarios.Scenario.Script) among those the engine has (scripts): the
// coupon sale, whose workload and figures a schedule does not carry.
// Every fault a scenario uses is a nemesis kind, and every other
// scenario's faults are a nemesis schedule (RunSchedule).
type Script struct {
	Workers int // client processes, the victim (client 0) included; default 4
	// Edit adjusts a worker's spec before it starts (victim is id 0).
	Edit func(env *Env, id int, ws *WorkerSpec)
	// Setup runs before any worker starts (e.g. cut the victim's links).
	Setup func(ctx context.Context, r *ScriptRun) error
	// Trigger is the failpoint armed in the victim; Inject runs once the
	// victim stops there (or at once when Trigger is empty) and must let the
	// victim go on (Continue) when it wants it to.
	Trigger func(spec impls.Spec) string
	Inject  func(ctx context.Context, r *ScriptRun) error
	// Observe is how long the others keep contending after Inject.
	Observe func(env *Env) time.Duration
	// Figures may set scenario-specific figures after the run (never the
	// verdict: the checker decides it).
	Figures func(r *ScriptRun, out *Outcome) error
}

// ScriptRun is the state of one scripted run in progress.
type ScriptRun struct {
	Env     *Env
	Workers []*Worker
	Victim  *Worker
	// Events is the merged history, once the workers stopped.
	Events    []lin.Event
	faultTime int64 // monotonic ns of the fault a hand-off counts reads from
}

// RunScript runs p on env's servers and has the checker judge the history.
func RunScript(ctx context.Context, env *Env, p Script) (*Outcome, error) {
	if p.Workers == 0 {
		p.Workers = 4
	}
	r := &ScriptRun{Env: env}
	// Whatever happened, no worker outlives the run.
	defer r.stopWorkers()
	addrs := make([]topology.Endpoints, p.Workers)
	for id := range addrs {
		addrs[id] = env.Topo.Endpoints()
	}
	if p.Setup != nil {
		if err := p.Setup(ctx, r); err != nil {
			return nil, err
		}
	}
	trigger := ""
	if p.Trigger != nil {
		trigger = p.Trigger(env.Impl)
	}
	if err := r.startWorkers(ctx, p, addrs, trigger); err != nil {
		return nil, err
	}
	env.Phase(PhaseWarmUp)
	if p.Inject != nil {
		if err := p.Inject(ctx, r); err != nil {
			return nil, err
		}
		env.Phase(PhaseFault)
	}
	return r.finish(ctx, p)
}

// startWorkers starts p's workers, client id on addrs[id]. With a
// trigger, the victim (client 0) alone takes the first grant (so its
// fencing token is 1) and stops at its failpoint; only then do the others
// contend.
func (r *ScriptRun) startWorkers(ctx context.Context, p Script, addrs []topology.Endpoints, trigger string) error {
	env := r.Env
	for id := 0; id < p.Workers; id++ {
		w, err := env.StartWorker(ctx, id, addrs[id], func(ws *WorkerSpec) {
			if trigger != "" {
				if id == 0 {
					ws.Arm = []string{trigger}
				} else {
					ws.WaitForGo = true
				}
			}
			if p.Edit != nil {
				p.Edit(env, id, ws)
			}
		})
		if err != nil {
			return err
		}
		r.Workers = append(r.Workers, w)
	}
	env.Phase(PhaseWorkers)
	r.Victim = r.Workers[0]
	if trigger == "" {
		return nil
	}
	if _, err := r.Victim.Await(ctx, "failpoint "+trigger, 30*time.Second+5*env.TTL); err != nil {
		return err
	}
	for _, w := range r.Workers[1:] {
		if err := w.Go(); err != nil {
			return err
		}
	}
	return nil
}

// finish lets the others contend for p's observation time after the
// fault, stops every worker, merges their histories, adds p's figures and
// has the checker judge the run.
func (r *ScriptRun) finish(ctx context.Context, p Script) (*Outcome, error) {
	env := r.Env
	out := &Outcome{Figures: map[string]float64{}, Clients: p.Workers, Processes: true}
	if p.Observe != nil {
		select {
		case <-time.After(p.Observe(env)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	env.Phase(PhaseAfter)
	r.stopWorkers()
	if err := env.collect(r.Workers); err != nil {
		return nil, err
	}
	env.Phase(PhaseStop)
	r.Events = env.Rec.Events()
	if p.Figures != nil {
		if err := p.Figures(r, out); err != nil {
			return nil, err
		}
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}

// stopWorkers stops every worker at once (each finishes its section).
func (r *ScriptRun) stopWorkers() {
	var wg sync.WaitGroup
	for _, w := range r.Workers {
		wg.Add(1)
		go func(w *Worker) { defer wg.Done(); w.Stop(2*r.Env.TTL + 3*time.Second) }(w)
	}
	wg.Wait()
}

// mark records the moment a hand-off counts reads from.
func (r *ScriptRun) mark() { r.faultTime = lin.Now() }

// handOffWait bounds how long a held-up victim waits for another client
// before it goes on anyway: half a TTL, so the victim still writes within
// its own lease and the only fault is the injected one.
func handOffWait(env *Env) time.Duration { return env.TTL / 2 }

// holdUp bounds how long a holder held up by a fault of kind k waits for
// another client before it goes on: handOffWait, so that a lease's holder
// still writes within its lease; but a lock with no expiry has no lease
// to stay within, and after a fault that makes clients reconnect
// (nemesis.Reconnecting) it waits at least as long as a live client
// takes to reach the servers again, so that a lock the fault broke has
// been granted to another client by then and the break shows. Half a TTL
// was shorter than that reconnection (a lab TTL of 1 s against about a
// second after a moved address), and the holder wrote alone whatever
// became of its lock.
func holdUp(env *Env, k nemesis.Kind) time.Duration {
	wait := handOffWait(env)
	if r, ok := k.(nemesis.Reconnecting); ok && !env.Impl.Caps.Expiry {
		wait = max(wait, r.Reconnect())
	}
	return wait
}

// HandOff marks the fault, waits (at most handOffWait) until another client
// has been granted the lock and has read the resource, then lets the victim
// go on with resume (Continue or ContinueThenLeave). Waiting for the read,
// not just the grant, makes the collision certain when the lock failed:
// both clients have read the same value before either writes, so the
// victim's write and the other's are one lost update, whichever lands
// first. Releasing the victim at the grant alone left a race in which the
// victim's write could land before the other's read and hide the failure.
func (r *ScriptRun) HandOff(ctx context.Context, resume func() error) error {
	r.mark()
	return r.handOffSince(ctx, r.faultTime, handOffWait(r.Env), resume)
}

// HandOffWithinLease is HandOff for a scenario whose victim must write
// within its own lease (a fault that leaves the lock held): the victim
// goes on while a quarter of its lease is left. Half a TTL keeps the
// victim's write within its lease only when the fault strikes right after
// the grant; a victim that reached its failpoint late (a loaded machine)
// and then waited half a TTL wrote past its lease, a pause the scenario
// does not mean: redlock-restart-delayed came out unsafe in container mode
// so. Where the fault took the lock away (a server restarted empty), the
// victim's lease means nothing and HandOff's wait is what lets the
// collision happen.
func (r *ScriptRun) HandOffWithinLease(ctx context.Context, resume func() error) error {
	r.mark()
	return r.handOffSince(ctx, r.faultTime, r.withinLease(handOffWait(r.Env)), resume)
}

// withinLease shortens wait to end when a quarter of the victim's lease
// is left, from its grant in its history.
func (r *ScriptRun) withinLease(wait time.Duration) time.Duration {
	return withinLease(r.Env, r.Victim, wait)
}

// withinLease shortens wait to end when a quarter of w's lease is left,
// from its last grant in its history.
func withinLease(env *Env, w *Worker, wait time.Duration) time.Duration {
	grant, ok := lastEvent(w, lin.Acquired)
	if !ok {
		return wait
	}
	left := time.Duration(grant + int64(env.TTL*3/4) - lin.Now())
	return max(0, min(wait, left))
}

// handOffSince is handOff for a fault marked earlier, at since, that took a
// while to complete (a server killed, then restarted): a read at any time
// after since counts, and the wait (at most wait) is bounded from now,
// when the fault is complete. Counting only reads after the restart returned missed a new
// holder that got in while the lab was still confirming the server was up;
// the victim then waited for that holder's next section, whose higher token
// made the resource refuse the victim's write and hid the repeated token.
func (r *ScriptRun) handOffSince(ctx context.Context, since int64, wait time.Duration, resume func() error) error {
	// Any client but the victim.
	waitFor(ctx, r.Workers[1:], lin.Read, since, wait)
	return resume()
}
