package scenarios

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/netproxy"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// plan is one fault scenario: worker processes contend for the lock while
// the orchestrator injects faults at chosen moments.
type plan struct {
	workers int // client processes, the victim (client 0) included; default 4
	// proxies routes every client's Redis lock links through its own proxy.
	proxies bool
	// edit adjusts a worker's spec before it starts (victim is id 0).
	edit func(env *Env, id int, ws *WorkerSpec)
	// setup runs before any worker starts (e.g. cut the victim's links).
	setup func(ctx context.Context, r *faultRun) error
	// trigger is the failpoint armed in the victim; inject runs once the
	// victim stops there (or at once when trigger is empty) and must let the
	// victim go on (Continue) when it wants it to.
	trigger func(spec impls.Spec) string
	inject  func(ctx context.Context, r *faultRun) error
	// observe is how long the others keep contending after inject.
	observe func(env *Env) time.Duration
	// judge may set scenario-specific figures and verdicts after the run.
	judge func(r *faultRun, out *Outcome) error
}

// faultRun is the state of one fault scenario in progress.
type faultRun struct {
	env       *Env
	net       *netproxy.Net
	workers   []*Worker
	victim    *Worker
	faultTime int64 // monotonic ns of the fault a hand-off counts reads from
	events    []lin.Event
}

// workerScenario builds a Scenario from a plan.
func workerScenario(name, summary string, applies func(impls.Spec, bool) error, needs func(impls.Spec) cluster.Needs, p plan) Scenario {
	return Scenario{
		Name: name, Summary: summary,
		Applies: func(spec impls.Spec, fencing bool) error {
			if spec.Backend.InProcess {
				return errors.New("its clients must share one process, so they cannot be crashed or paused one by one")
			}
			if applies != nil {
				return applies(spec, fencing)
			}
			return nil
		},
		Needs: needs,
		Run:   func(ctx context.Context, env *Env) (*Outcome, error) { return runPlan(ctx, env, p) },
	}
}

func runPlan(ctx context.Context, env *Env, p plan) (*Outcome, error) {
	if p.workers == 0 {
		p.workers = 4
	}
	r := &faultRun{env: env}
	if p.proxies {
		r.net = netproxy.New()
		defer r.net.Close()
	}
	// Whatever happened, no worker outlives the run.
	defer r.stopWorkers()
	// Every link exists before setup, so setup can cut some of them.
	addrs := make([][]string, p.workers)
	for id := range addrs {
		a, err := r.lockAddrs(id)
		if err != nil {
			return nil, err
		}
		addrs[id] = a
	}
	if p.setup != nil {
		if err := p.setup(ctx, r); err != nil {
			return nil, err
		}
	}
	trigger := ""
	if p.trigger != nil {
		trigger = p.trigger(env.Impl)
	}
	for id := 0; id < p.workers; id++ {
		w, err := env.StartWorker(ctx, id, addrs[id], func(ws *WorkerSpec) {
			if trigger != "" {
				if id == 0 {
					ws.Arm = []string{trigger}
				} else {
					ws.WaitForGo = true
				}
			}
			if p.edit != nil {
				p.edit(env, id, ws)
			}
		})
		if err != nil {
			return nil, err
		}
		r.workers = append(r.workers, w)
	}
	r.victim = r.workers[0]
	if trigger != "" {
		// The victim alone takes the first grant (so its fencing token is 1)
		// and stops at its failpoint; only then do the others contend.
		if _, err := r.victim.Await(ctx, "failpoint "+trigger, 30*time.Second+5*env.TTL); err != nil {
			return nil, err
		}
		for _, w := range r.workers[1:] {
			if err := w.Go(); err != nil {
				return nil, err
			}
		}
	}
	if p.inject != nil {
		if err := p.inject(ctx, r); err != nil {
			return nil, err
		}
	}
	out := &Outcome{Figures: map[string]float64{}, Clients: p.workers, Processes: true}
	if p.observe != nil {
		select {
		case <-time.After(p.observe(env)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.stopWorkers()
	if err := env.collect(r.workers); err != nil {
		return nil, err
	}
	r.events = env.Rec.Events()
	if p.judge != nil {
		if err := p.judge(r, out); err != nil {
			return nil, err
		}
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}

// stopWorkers stops every worker at once (each finishes its section).
func (r *faultRun) stopWorkers() {
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Add(1)
		go func(w *Worker) { defer wg.Done(); w.Stop(2*r.env.TTL + 3*time.Second) }(w)
	}
	wg.Wait()
}

// lockAddrs returns the addresses client id uses for the Redis lock nodes:
// its own proxy to each when the plan has proxies.
func (r *faultRun) lockAddrs(id int) ([]string, error) {
	if r.net == nil {
		return r.env.Topo.RedisAddrs, nil
	}
	if len(r.env.Topo.Redis) == 0 {
		return nil, errors.New("network faults need Redis nodes the lab starts itself")
	}
	var addrs []string
	for _, n := range r.env.Topo.Redis {
		l, err := r.net.Link(id, n.Name, n.Addr)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, l.Addr)
	}
	return addrs, nil
}

// mark records the moment a hand-off counts reads from.
func (r *faultRun) mark() { r.faultTime = lin.Now() }

// waitFor follows the histories of workers until one of them records an
// event of kind after time after, or bound passes.
func waitFor(ctx context.Context, workers []*Worker, kind lin.Kind, after int64, bound time.Duration) (int64, bool) {
	tails := make([]*historyTail, 0, len(workers))
	for _, w := range workers {
		t := &historyTail{path: w.Spec.History}
		defer t.close()
		tails = append(tails, t)
	}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, t := range tails {
			for _, e := range t.next() {
				if e.Kind == kind && e.Time > after {
					return e.Time, true
				}
			}
		}
		// Poll fast: scenarios release their victim while another client is
		// still inside its critical section (sections take 5-20ms).
		time.Sleep(2 * time.Millisecond)
	}
	return 0, false
}

// handOffWait bounds how long a held-up victim waits for another client
// before it goes on anyway: half a TTL, so the victim still writes within
// its own lease and the only fault is the injected one.
func handOffWait(env *Env) time.Duration { return env.TTL / 2 }

// handOff marks the fault, waits (at most handOffWait) until another client
// has been granted the lock and has read the resource, then lets the victim
// go on with resume (Continue or ContinueThenLeave). Waiting for the read,
// not just the grant, makes the collision certain when the lock failed:
// both clients have read the same value before either writes, so the
// victim's write and the other's are one lost update, whichever lands
// first. Releasing the victim at the grant alone left a race in which the
// victim's write could land before the other's read and hide the failure.
func (r *faultRun) handOff(ctx context.Context, resume func() error) error {
	r.mark()
	return r.handOffSince(ctx, r.faultTime, resume)
}

// handOffSince is handOff for a fault marked earlier, at since, that took a
// while to complete (a server killed, then restarted): a read at any time
// after since counts, and the wait is bounded from now, when the fault is
// complete. Counting only reads after the restart returned missed a new
// holder that got in while the lab was still confirming the server was up;
// the victim then waited for that holder's next section, whose higher token
// made the resource refuse the victim's write and hid the repeated token.
func (r *faultRun) handOffSince(ctx context.Context, since int64, resume func() error) error {
	// Any client but the victim.
	waitFor(ctx, r.workers[1:], lin.Read, since, handOffWait(r.env))
	return resume()
}

// historyTail reads a worker's history as it grows: the file stays open and
// each call parses only the complete lines appended since the last, so
// polling every few milliseconds stays cheap.
type historyTail struct {
	path    string
	f       *os.File
	off     int64
	partial []byte // a line the worker has not finished writing
}

func (h *historyTail) next() []lin.Event {
	if h.f == nil {
		f, err := os.Open(h.path)
		if err != nil {
			return nil // not created yet
		}
		h.f = f
	}
	buf, err := io.ReadAll(io.NewSectionReader(h.f, h.off, 1<<40))
	if err != nil || len(buf) == 0 {
		return nil
	}
	h.off += int64(len(buf))
	buf = append(h.partial, buf...)
	end := bytes.LastIndexByte(buf, '\n') + 1
	h.partial = append([]byte(nil), buf[end:]...)
	evs, _ := lin.ReadEvents(bytes.NewReader(buf[:end]))
	return evs
}

func (h *historyTail) close() {
	if h.f != nil {
		h.f.Close()
	}
}
