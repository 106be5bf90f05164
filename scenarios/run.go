package scenarios

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
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
)

// Env is what a scenario's Run works with: the options, the servers, the
// history recorder and a way to build clients.
type Env struct {
	Options
	Scenario Scenario
	Topo     *cluster.Topology
	Rec      *lin.Recorder
	// Key is the lock key and the counter's name for this run.
	Key string

	// QuorumLoss and Available are windows the scenario recorded in which
	// a consistent lock must grant nothing / must keep granting; the
	// checker judges them.
	QuorumLoss, Available []checker.Window
	// Reach names what a fault needs the lock to use (ReachClockReads);
	// the checker finds the run not applicable when the lock never did.
	Reach string

	workDir string // worker histories and logs, removed after the run
}

// Run executes scenario name against opts.Impl: it starts the servers the
// lock and the scenario need, runs the scenario, checks the history and
// stops every server, whatever happened.
func Run(ctx context.Context, name string, opts Options) (*Outcome, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	opts.defaults()
	if s.Applies != nil {
		if err := s.Applies(opts.Impl, opts.Fencing); err != nil {
			return nil, fmt.Errorf("scenario %s does not apply to %s: %w", name, opts.Impl.Name, err)
		}
	}
	if opts.Fencing && !opts.Impl.Caps.Fencing {
		return nil, fmt.Errorf("%s issues no fencing tokens, so -fencing cannot apply", opts.Impl.Name)
	}
	needs := cluster.Needs{
		RedisNodes: opts.Impl.Backend.RedisNodes,
		ZooKeeper:  opts.Impl.Backend.ZooKeeper,
		Postgres:   opts.Impl.Backend.Postgres,
		Resource:   true,
	}
	if s.Needs != nil {
		needs = needs.Merge(s.Needs(opts.Impl))
	}
	start := time.Now()
	opts.Logf("starting servers for %s / %s (seed %d)", opts.Impl.Name, name, opts.Seed)
	topo, err := cluster.Start(ctx, needs, opts.External)
	if err != nil {
		return nil, err
	}
	defer topo.Close()
	workDir, err := os.MkdirTemp("", "locklab-run-")
	if err != nil {
		return nil, fmt.Errorf("make run dir: %w", err)
	}
	defer os.RemoveAll(workDir)
	env := &Env{Options: opts, Scenario: s, Topo: topo, Rec: lin.NewRecorder(nil),
		Key: "locklab-" + strconv.FormatInt(opts.Seed, 36), workDir: workDir}
	counter := resource.NewVia(topo.ResourceAddr, env.Key, topo.Dialer())
	err = counter.Reset(ctx)
	counter.Close()
	if err != nil {
		return nil, err
	}
	out, err := s.Run(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("%s / %s: %w", opts.Impl.Name, name, err)
	}
	out.Scenario, out.Impl, out.Fencing, out.Seed = name, opts.Impl.Name, opts.Fencing, opts.Seed
	out.Elapsed = time.Since(start)
	return out, nil
}

// Config returns the lock configuration for client id.
func (e *Env) Config(id int) impls.Config {
	return impls.Config{
		Redis:     e.Topo.RedisAddrs,
		ZooKeeper: e.Topo.ZooKeeperAddr,
		Postgres:  e.Topo.PostgresDSN,
		TTL:       e.TTL,
		ClientID:  fmt.Sprintf("client-%d", id),
	}
}

// NewClient builds client id in this process with its own Locker and
// resource connection. Close it with CloseClient.
func (e *Env) NewClient(id int, cfg impls.Config) (*Client, error) {
	l, err := e.Impl.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("new %s client %d: %w", e.Impl.Name, id, err)
	}
	rng := rand.New(rand.NewPCG(uint64(e.Seed), uint64(id)))
	return &Client{
		ID: id, Key: e.Key, Locker: l, Rec: e.Rec, Fenced: e.Fencing,
		Counter: resource.New(e.Topo.ResourceAddr, e.Key),
		// A short, random piece of work widens the window in which two
		// holders would overlap, without slowing the run much.
		Work: func() time.Duration { return time.Duration(rng.Int64N(int64(300 * time.Microsecond))) },
	}, nil
}

// CloseClient closes a client's connections.
func CloseClient(c *Client) {
	c.Locker.Close()
	c.Counter.Close()
}

// Judge hands the history to the checker, the one place a verdict is
// decided, and keeps what it needs to show: the verdict replaces whatever
// the scenario assumed, a counterexample writes its timeline.
func (e *Env) Judge(o *Outcome) error {
	events := e.Rec.Events()
	d := checker.Decide(checker.Input{
		Events: events, TTL: e.TTL, End: lin.Now(),
		QuorumLoss: e.QuorumLoss, Available: e.Available,
		Minimum: e.minimum(), Timeout: e.CheckTimeout, Reach: e.Reach,
	})
	o.Verdict, o.Sections, o.Unknown = d.Verdict, d.Sections, d.Unknown
	o.GrantsAfterFault = d.Liveness.GrantsAfterFault
	if d.Detail != "" {
		if o.Detail != "" {
			o.Detail = d.Detail + "; " + o.Detail
		} else {
			o.Detail = d.Detail
		}
	}
	name := fmt.Sprintf("%s-%s", e.Impl.Name, e.Scenario.Name)
	if e.Fencing {
		name += "-fenced"
	}
	base := filepath.Join(e.outDir(), fmt.Sprintf("%s-seed%d", name, e.Seed))
	if o.Verdict == Unsafe {
		path, err := d.Result.WriteHTML(base + ".html")
		if err != nil {
			return err
		}
		o.HTML = path
	}
	if o.Verdict == Unsafe || e.KeepHistory {
		path := base + ".history.jsonl"
		if err := lin.WriteEvents(path, events); err != nil {
			return err
		}
		o.History = path
	}
	return nil
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
