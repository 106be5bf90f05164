package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
	"github.com/locklab/locklab/topology"
	"github.com/locklab/locklab/workload"
)

// Env is what a job's body works with: the options, the servers, the
// history recorder and a way to build clients.
type Env struct {
	Options
	// Name names the run's job (a scenario); counterexample files carry it.
	Name string
	Topo *cluster.Topology
	Rec  *lin.Recorder
	// Key is the lock key and the counter's name for this run.
	Key string

	// QuorumLoss and Available are windows the run recorded in which a
	// consistent lock must grant nothing / must keep granting; the checker
	// judges them.
	QuorumLoss, Available []checker.Window
	// Reach names what a fault needs the lock to use (ReachClockReads);
	// the checker finds the run not applicable when the lock never did.
	Reach string
	// Risk is the job's rule for when its fault puts the lock at risk
	// (Job.Risk), and Holders the clients a body knew held the lock when
	// its fault struck (nil: the checker reads them off the history).
	Risk    checker.Risk
	Holders []int
	// SessionLease is how long the run's servers let a session sit idle
	// before they end it (Job.SessionLease).
	SessionLease time.Duration
	// FailOver is how long the run's profile gives its servers to notice a
	// lost member and replace it (topology.Profile.FailOverOf; 0: the
	// fixed faults were chosen for the profile's own times).
	FailOver time.Duration

	workDir string // worker histories and logs, removed after the run
	clock   *phaseClock
}

// Job is what Run executes: a named body over the servers it declares.
type Job struct {
	Name string
	// Topology declares the lock's servers for this run (the engine adds
	// the protected resource); empty: the lock's own on the run's named
	// topology (Options.Topology).
	Topology topology.Declaration
	// Body drives the clients and faults and has the checker judge the
	// history (Env.Judge).
	Body func(ctx context.Context, env *Env) (*Outcome, error)
	// Risk is the scenario's rule for when its fault puts the lock at
	// risk (scenarios.Scenario.Risk), which the checker judges the run's
	// exercise by.
	Risk checker.Risk
	// SessionLease is how long the servers let a session sit idle before
	// they end it and the lock bound to it (scenarios.SessionIdle; 0:
	// never): the lease, for the checker, of a lock whose claim has no
	// expiry of its own.
	SessionLease time.Duration
}

// Run executes job against opts.Impl: it starts the servers the lock and
// the job need, runs the body, and stops every server, whatever happened.
func Run(ctx context.Context, job Job, opts Options) (*Outcome, error) {
	opts.defaults()
	if opts.Fencing && !opts.Impl.Caps.Fencing {
		return nil, fmt.Errorf("%s issues no fencing tokens, so -fencing cannot apply", opts.Impl.Name)
	}
	decl := job.Topology
	if len(decl.Groups) == 0 {
		named, err := topology.Lookup(opts.Topology)
		if err != nil {
			return nil, err
		}
		if decl, err = opts.Impl.Backend.On(named); err != nil {
			return nil, err
		}
	}
	profile, err := topology.LookupProfile(opts.Profile)
	if err != nil {
		return nil, err
	}
	decl = profile.Apply(decl)
	start := time.Now()
	opts.Logf("starting servers for %s / %s (seed %d, profile %s)", opts.Impl.Name, job.Name, opts.Seed, profile.Name)
	env, stop, err := startRun(ctx, decl, opts, job.Name)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	env.clock = newPhaseClock(start)
	env.Risk, env.SessionLease, env.FailOver = job.Risk, job.SessionLease, profile.FailOverOf(decl)
	env.Phase(PhaseServers)
	out, err := job.Body(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("%s / %s: %w", opts.Impl.Name, job.Name, err)
	}
	stop()
	stopped = true
	env.Phase(PhaseTeardown)
	out.Scenario, out.Impl, out.Topology, out.Profile, out.Fencing, out.Seed = job.Name, opts.Impl.Name, opts.Topology, profile.Name, opts.Fencing, opts.Seed
	out.Elapsed = time.Since(start)
	out.Phases = env.clock.phases()
	return out, nil
}

// startRun is the one place a run's servers, run dir and counter come from:
// it starts the lock's servers as decl declares them and the protected
// resource beside them, makes the run dir and resets the counter, and
// returns the run's Env with the function that undoes it all.
func startRun(ctx context.Context, decl topology.Declaration, opts Options, name string) (*Env, func(), error) {
	decl = decl.Merge(topology.Of(topology.ResourceNode()))
	topo, err := cluster.Start(ctx, decl, opts.External)
	if err != nil {
		return nil, nil, err
	}
	// Marked as this process's, so a later run sweeps it should this one be
	// SIGKILLed, and StopAll removes it at any other exit.
	workDir, err := leftovers.MakeDir("run")
	if err != nil {
		topo.Close()
		return nil, nil, err
	}
	stop := func() {
		os.RemoveAll(workDir)
		topo.Close()
	}
	env := &Env{Options: opts, Name: name, Topo: topo, Rec: lin.NewRecorder(nil),
		Key: "locklab-" + strconv.FormatInt(opts.Seed, 36), workDir: workDir}
	counter := resource.NewVia(topo.ResourceAddr, env.Key, topo.Dialer())
	err = counter.Reset(ctx)
	counter.Close()
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("reset the protected counter: %w", err)
	}
	return env, stop, nil
}

// Config returns the lock configuration for client id.
func (e *Env) Config(id int) impls.Config {
	return impls.Config{
		Servers:  e.Topo.Endpoints(),
		TTL:      e.TTL,
		ClientID: fmt.Sprintf("client-%d", id),
	}
}

// NewClient builds client id in this process with its own Locker and
// resource connection. Close it with CloseClient.
func (e *Env) NewClient(id int, cfg impls.Config) (*workload.Client, error) {
	l, err := e.Impl.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("new %s client %d: %w", e.Impl.Name, id, err)
	}
	rng := rand.New(rand.NewPCG(uint64(e.Seed), uint64(id)))
	return &workload.Client{
		ID: id, Key: e.Key, Locker: l, Rec: e.Rec, Fenced: e.Fencing,
		Counter: resource.New(e.Topo.ResourceAddr, e.Key),
		// A short, random piece of work widens the window in which two
		// holders would overlap, without slowing the run much.
		Work: func() time.Duration { return time.Duration(rng.Int64N(int64(300 * time.Microsecond))) },
	}, nil
}

// NewClients builds one in-process client per env.Clients, each with its
// own configuration, and returns them with the function that closes them
// all; when one fails to build, those already built are closed.
func (e *Env) NewClients() ([]*workload.Client, func(), error) {
	clients := make([]*workload.Client, e.Clients)
	closeAll := func(cs []*workload.Client) {
		for _, c := range cs {
			CloseClient(c)
		}
	}
	for i := range clients {
		c, err := e.NewClient(i, e.Config(i))
		if err != nil {
			closeAll(clients[:i])
			return nil, nil, err
		}
		clients[i] = c
	}
	return clients, func() { closeAll(clients) }, nil
}

// CloseClient closes a client's connections.
func CloseClient(c *workload.Client) {
	c.Locker.Close()
	c.Counter.Close()
}

// Judge hands the history to the checker, the one place a verdict is
// decided, and keeps what it needs to show: the verdict replaces whatever
// the scenario assumed, a counterexample writes its timeline.
func (e *Env) Judge(o *Outcome) error {
	e.Phase(PhaseRun)
	defer e.Phase(PhaseCheck)
	events := e.Rec.Events()
	d := checker.Decide(checker.Input{
		Events: events, TTL: e.TTL, End: lin.Now(),
		QuorumLoss: e.QuorumLoss, Available: e.Available,
		Minimum: e.minimum(), Timeout: e.CheckTimeout, Reach: e.Reach,
		Risk: e.Risk, Holders: e.Holders, Claim: e.claim(),
	})
	o.Verdict, o.Sections, o.Unknown = d.Verdict, d.Sections, d.Unknown
	o.ExerciseJudged, o.Exercised = d.Exercise.Judged, d.Exercise.Exercised
	for _, x := range d.Exercise.Exposures {
		if ev, ok := x.Event(); ok {
			// The saved history carries the windows the verdict rests on.
			events = append(events, ev)
		}
		o.Exposures = append(o.Exposures, x)
	}
	lin.SortEvents(events)
	o.GrantsAfterFault = d.Liveness.GrantsAfterFault
	if d.Detail != "" {
		if o.Detail != "" {
			o.Detail = d.Detail + "; " + o.Detail
		} else {
			o.Detail = d.Detail
		}
	}
	name := fmt.Sprintf("%s-%s", e.Impl.Name, e.Name)
	if e.Fencing {
		name += "-fenced"
	}
	base := filepath.Join(e.outDir(), fmt.Sprintf("%s-seed%d", name, e.Seed))
	if checker.SafetyViolated(o.Verdict) {
		path, err := d.Result.WriteHTML(base + ".html")
		if err != nil {
			return err
		}
		o.HTML = path
	}
	// A stuck run keeps its history too: nothing else says which client
	// sat on the lock, and a seed does not fix the order of events, so the
	// run may never be seen again.
	if checker.SafetyViolated(o.Verdict) || checker.LivenessViolated(o.Verdict) || e.KeepHistory {
		path := base + HistorySuffix
		if err := lin.WriteEvents(path, events); err != nil {
			return err
		}
		o.History = path
	}
	return nil
}

// claim is the lock's kind of hold on the run's servers, for the danger
// window: its lease, as its capabilities declare it; or, for a lock with
// no expiry of its own, its session's, on servers that end idle sessions
// (every request on the session renews it).
func (e *Env) claim() checker.Claim {
	c := checker.Claim{Expires: e.Impl.Caps.Expiry, Renews: e.Impl.Caps.Renewal}
	if !c.Expires && e.SessionLease > 0 {
		c = checker.Claim{Expires: true, Renews: true, Lease: e.SessionLease}
	}
	return c
}

// minimum is the progress a run must make to be judged: the checker's
// default, scaled down when the caller asked for fewer sections than it.
func (e *Env) minimum() checker.Minimum {
	m := checker.DefaultMinimum
	if e.Sections < m.Sections {
		m.Sections = e.Sections
	}
	return m
}

func (e *Env) outDir() string {
	if e.OutDir != "" {
		return e.OutDir
	}
	return filepath.Join(os.TempDir(), "locklab")
}

// AcquireBound is how long one acquire may wait (checker.AcquireBound).
func (e *Env) AcquireBound() time.Duration { return checker.AcquireBound(e.TTL) }
