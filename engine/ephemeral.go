package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/workload/docclaims"
)

// EphemeralJob is the job that times how long the ZooKeeper of the lock
// it runs for (Options.Impl: docclaims.ZooKeeper) keeps a holder's
// ephemeral node after a clean close and after a SIGKILL, opt's trials
// each way, with opt.Session the session timeout the holders ask for
// (Options.TTL should be the same: the killed holder's worker takes it).
// The engine starts and stops the servers as for every run; the holder
// that is killed is a worker process of the run (StartWorker) holding the
// lock for hold, far longer than the measurement, so that only its
// SIGKILL ends its session. What it measured lands in *got, one result
// per way, and its verdict is the checker's on every way having trials
// (EphemeralVerdict).
func EphemeralJob(opt docclaims.EphemeralOptions, hold time.Duration, got *[]docclaims.EphemeralResult) Job {
	return Job{Name: "ephemeral-node", Body: func(ctx context.Context, env *Env) (*Outcome, error) {
		opt.ZooKeeper = env.Topo.Endpoints().Addrs(env.Impl.Backend.Kind)
		if len(opt.ZooKeeper) == 0 {
			return nil, fmt.Errorf("the ephemeral node needs a %s server, and the run started none", env.Impl.Backend.Kind)
		}
		var workers []*Worker
		defer func() { env.StopWorkers(workers) }()
		opt.StartHolder = func(ctx context.Context, key string) (func(), error) {
			// A worker per trial, so each has its own log and history.
			w, err := env.StartWorker(ctx, len(workers)+1, env.Topo.Endpoints(), func(ws *WorkerSpec) {
				ws.Key, ws.WorkMin, ws.WorkMax, ws.AcquireTimeout = key, hold, hold, 2*hold
			})
			if err != nil {
				return nil, err
			}
			workers = append(workers, w)
			return w.Kill, nil
		}
		env.Logf("lesson claims: ephemeral node, session %s, %d trials each way", opt.Session, opt.Trials)
		results, err := docclaims.MeasureEphemeral(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("ephemeral node: %w", err)
		}
		*got = results
		env.Phase(PhaseWorkload)
		out := &Outcome{Clients: 1, Processes: true, Figures: map[string]float64{}}
		out.Verdict, out.Detail = JudgeEphemeral(results)
		env.Phase(PhaseCheck)
		return out, nil
	}}
}

// JudgeEphemeral is the worst of EphemeralVerdict over every way of
// dying; none measured is inconclusive.
func JudgeEphemeral(results []docclaims.EphemeralResult) (checker.Verdict, string) {
	if len(results) == 0 {
		return checker.JudgeProgress(0), "ephemeral node: no way measured"
	}
	parts := make([]func() (checker.Verdict, string), len(results))
	for i, e := range results {
		parts[i] = func() (checker.Verdict, string) { return EphemeralVerdict(e) }
	}
	return worstOf(parts)
}

// EphemeralVerdict is the checker's verdict on one way of dying
// (checker.JudgeProgress: some trial took the lock and saw its node go);
// how long the node stayed, the lesson page describes.
func EphemeralVerdict(e docclaims.EphemeralResult) (checker.Verdict, string) {
	v := checker.JudgeProgress(len(e.DeletedMS))
	if checker.Survived(v) {
		return v, ""
	}
	return v, fmt.Sprintf("ephemeral node, %s: no trial", e.Way)
}
