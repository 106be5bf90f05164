package engine

import (
	"context"
	"fmt"
	"strings"
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
// (JudgeTakeover); its figure late-takeovers counts the rounds a second
// winner took over a lease that had ended (checker.LateTakeover).
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
		// A racer held back past the first winner's lease takes over a
		// lease that ended, as the lock is meant to: counted, not unsafe.
		out := &Outcome{Clients: opt.Clients, Figures: map[string]float64{"late-takeovers": float64(LateTakeovers(results))}}
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
		races[i] = TakeoverRounds(r)
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
	return v, fmt.Sprintf("race, clocks ±%s, round %d: %d winners%s, key overwritten %v, the last winner's refresh refused %v%s",
		r.ClockSpread, bad+1, x.Winners, grantTimes(x.Grants), x.Overwritten, x.RefreshRefused, refreshTime(x))
}

// TakeoverRounds is r's rounds as the checker judges them.
func TakeoverRounds(r takeover.Result) []checker.TakeoverRound {
	rounds := make([]checker.TakeoverRound, 0, len(r.Rounds))
	for _, x := range r.Rounds {
		c := checker.TakeoverRound{Winners: x.Winners, Overwritten: x.Overwritten, RefreshRefused: x.RefreshRefused, RefreshReply: x.RefreshReply}
		for _, g := range x.Grants {
			c.Grants = append(c.Grants, checker.TakeoverGrant{Start: g.Start, Reply: g.Reply, Lease: g.Lease})
		}
		rounds = append(rounds, c)
	}
	return rounds
}

// LateTakeovers counts the rounds of results whose second winner took
// over a lease that had ended (checker.LateTakeover).
func LateTakeovers(results []takeover.Result) int {
	n := 0
	for _, r := range results {
		for _, x := range TakeoverRounds(r) {
			if checker.LateTakeover(x) {
				n++
			}
		}
	}
	return n
}

// grantTimes is a round's grants as a detail line reads them: each
// request's span and its lease's end, in ms since the racers were let go.
func grantTimes(grants []takeover.Grant) string {
	if len(grants) == 0 {
		return ""
	}
	parts := make([]string, len(grants))
	for i, g := range grants {
		parts[i] = fmt.Sprintf("%s asked %s–%s, lease to %s", g.Client, ms(g.Start), ms(g.Reply), ms(g.Start+g.Lease))
	}
	return " (" + strings.Join(parts, "; ") + ", ms since the race began)"
}

// refreshTime is when the last winner's Refresh was answered, for a round
// that timed it.
func refreshTime(x takeover.Round) string {
	if x.RefreshReply == 0 {
		return ""
	}
	return fmt.Sprintf(" (answered at %s ms)", ms(x.RefreshReply))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// TakeoverVerdict is the checker's verdict on one clock setting's rounds,
// with a line on the round that gave it when that is not safe.
func TakeoverVerdict(r takeover.Result) (checker.Verdict, string) {
	return JudgeTakeover([]takeover.Result{r})
}
