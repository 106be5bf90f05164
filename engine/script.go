package engine

import (
	"context"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
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
	Events []lin.Event
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
// contend. The victim too waits until every worker is up: let go at its
// own "ready", it held its lease while the others started, and the fault
// found it late in the lease (as the fixed schedules' did: startClients).
func (r *ScriptRun) startWorkers(ctx context.Context, p Script, addrs []topology.Endpoints, trigger string) error {
	env := r.Env
	for id := 0; id < p.Workers; id++ {
		w, err := env.StartWorker(ctx, id, addrs[id], func(ws *WorkerSpec) {
			if trigger != "" {
				ws.WaitForGo = true
				if id == 0 {
					ws.Arm = []string{trigger}
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
	if err := r.Victim.Go(); err != nil {
		return err
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
