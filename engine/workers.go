package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/topology"
)

// WorkerSpec is runner.WorkerSpec, named here because a schedule's
// workload (sections) and a body that starts its own workers
// (StartWorker) edit it before a worker starts.
type WorkerSpec = runner.WorkerSpec

// Worker is the scenario's handle on one client process: the runner's
// process handle, plus the run's timeline, where its faults are recorded.
type Worker struct {
	*runner.Worker
	env *Env
	// proc is the worker's process, for the nemesis's process faults.
	proc *cluster.Process
}

// StartWorker re-executes this binary as client id. edit may change the
// spec (failpoints, skew, work) before it starts. It returns once the
// worker has built its lock client.
func (e *Env) StartWorker(ctx context.Context, id int, servers topology.Endpoints, edit func(*WorkerSpec)) (*Worker, error) {
	ws := WorkerSpec{
		Impl: e.Impl.Name, ID: id, Key: e.Key,
		Servers:  servers,
		Resource: e.Topo.ResourceAddr, TTL: e.TTL, Fenced: e.Fencing,
		// Sections of a few milliseconds keep a run to a few hundred of
		// them: enough to catch an overlap, few enough for a readable timeline.
		WorkMin: 5 * time.Millisecond, WorkMax: 20 * time.Millisecond,
		Seed: e.Seed, History: filepath.Join(e.workDir, fmt.Sprintf("client-%d.jsonl", id)),
		AcquireTimeout: e.AcquireBound(),
	}
	if edit != nil {
		edit(&ws)
	}
	// On a run with hosts, every client runs on a host of its own, named
	// client-<id>, so network faults can cut it off.
	var host *hosts.Host
	if e.Topo.Net != nil {
		var err error
		if host = e.Topo.Net.Host(fmt.Sprintf("client-%d", id)); host == nil {
			if host, err = e.Topo.Net.AddHost(ctx, fmt.Sprintf("client-%d", id)); err != nil {
				return nil, err
			}
		}
	}
	rw, err := runner.Start(ctx, ws, filepath.Join(e.workDir, fmt.Sprintf("client-%d.log", id)), host, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return &Worker{Worker: rw, env: e, proc: rw.Process()}, nil
}

// FaultAt records an instantaneous fault on the timeline.
func (e *Env) FaultAt(inj lin.Injection) {
	e.Rec.Record(lin.FaultEvent(lin.Now(), 0, inj, ""))
}

// StopWorkers stops every worker at once (each finishes its section, or
// is killed two TTLs and three seconds on). Stopping one twice is
// harmless, so a body that started its own workers (StartWorker) defers
// it for its error paths as well as calling it before Collect.
func (e *Env) StopWorkers(workers []*Worker) {
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func(w *Worker) { defer wg.Done(); w.Stop(2*e.TTL + 3*time.Second) }(w)
	}
	wg.Wait()
}

// Collect merges every worker's history into the run's recorder, once
// they stopped (StopWorkers), for the checker to judge (Judge).
func (e *Env) Collect(workers []*Worker) error {
	for _, w := range workers {
		f, err := os.Open(w.Spec.History)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		evs, err := lin.ReadEvents(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("client %d: %w", w.ID, err)
		}
		for _, ev := range evs {
			e.Rec.Record(ev)
		}
	}
	return nil
}
