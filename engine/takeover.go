package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/workload/takeover"
)

// TakeoverJob is the job that races clients of the lock it runs for
// (Options.Impl: takeover.Lock, redis-getset) for locks whose holder went
// away, on that lock's Redis, once per clock spread in spreads with opt's
// clients, rounds and TTL (opt.Redis is the run's server). The engine
// starts and stops the server as for every run; the racers are in-process
// clients, each with the clock its spread gives it, which a worker
// process cannot be handed. What it measured lands in *got, one result per
// spread, and its verdict is the checker's over every round
// (JudgeTakeover).
func TakeoverJob(opt takeover.Options, spreads []time.Duration, got *[]takeover.Result) Job {
	return Job{Name: "takeover", Body: func(ctx context.Context, env *Env) (*Outcome, error) {
		opt.Redis = env.Topo.Endpoints().First(env.Impl.Backend.Kind)
		if opt.Redis == "" {
			return nil, fmt.Errorf("the race needs a %s server, and the run started none", env.Impl.Backend.Kind)
		}
		var results []takeover.Result
		for _, spread := range spreads {
			opt.ClockSpread = spread
			env.Logf("takeover: %s, %d clients, %d rounds, TTL %s, clocks ±%s", env.Impl.Name, opt.Clients, opt.Rounds, opt.TTL, spread)
			r, err := takeover.Measure(ctx, opt)
			if err != nil {
				return nil, err
			}
			results = append(results, r)
		}
		*got = results
		env.Phase(PhaseWorkload)
		out := &Outcome{Clients: opt.Clients, Figures: map[string]float64{}}
		out.Verdict, out.Detail = JudgeTakeover(results)
		env.Phase(PhaseCheck)
		return out, nil
	}}
}

// JudgeTakeover has the checker judge measured races
// (checker.JudgeTakeovers): the worst of their verdicts, with a line on
// the first round that gave it. No race at all is inconclusive.
func JudgeTakeover(results []takeover.Result) (checker.Verdict, string) {
	races := make([][]checker.TakeoverRound, len(results))
	for i, r := range results {
		for _, x := range r.Rounds {
			races[i] = append(races[i], checker.TakeoverRound{Winners: x.Winners, Overwritten: x.Overwritten, RefreshRefused: x.RefreshRefused})
		}
	}
	v, race, bad := checker.JudgeTakeovers(races)
	switch {
	case race < 0 && checker.Survived(v):
		return v, ""
	case race < 0:
		return v, "no race was measured"
	case bad < 0:
		return v, fmt.Sprintf("race, clocks ±%s: no round", results[race].ClockSpread)
	}
	r, x := results[race], results[race].Rounds[bad]
	return v, fmt.Sprintf("race, clocks ±%s, round %d: %d winners, key overwritten %v, the winner's refresh refused %v",
		r.ClockSpread, bad+1, x.Winners, x.Overwritten, x.RefreshRefused)
}

// TakeoverVerdict is the checker's verdict on one clock setting's rounds,
// with a line on the round that gave it when that is not safe.
func TakeoverVerdict(r takeover.Result) (checker.Verdict, string) {
	return JudgeTakeover([]takeover.Result{r})
}
