package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/locklab/locklab/workload"
)

// runReentry is the re-entry workload, seed 003's claim that a lock
// should be reentrant (and that its lock table is not): client 0's
// section takes the lock again while it holds it, writes under the inner
// grant, releases it and writes again trusting the outer one. A lock that
// is not reentrant waits out its own lease and then leaves the outer code
// unprotected (unsafe), or waits for ever (stuck).
func runReentry(ctx context.Context, env *Env) (*Outcome, error) {
	clients, closeClients, err := env.NewClients()
	if err != nil {
		return nil, err
	}
	defer closeClients()
	// Thirty TTLs: a lock that is not reentrant spends about one per
	// re-entry, waiting out its own lease.
	res := workload.ContendNested(ctx, clients, env.Sections, env.AcquireBound(), time.Now().Add(30*env.TTL))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env.Phase(PhaseWorkload)
	out := &Outcome{Clients: env.Clients, Figures: map[string]float64{}}
	out.Figures["unprotected-sections"] = float64(res.Unprotected)
	out.Detail = fmt.Sprintf("client 0 re-entered %d times; %d of its outer sections ran after the lock had gone (their release found it not held)",
		len(res.Waits), res.Unprotected)
	if len(res.Waits) > 0 {
		w := slices.Clone(res.Waits)
		slices.Sort(w)
		med, top := w[len(w)/2], w[len(w)-1]
		out.Figures["re-entry-ms"] = msOf(med)
		out.Figures["re-entry-max-ms"] = msOf(top)
		out.Detail += fmt.Sprintf("; the inner acquire took %v at the median, %v at most", roundWait(med), roundWait(top))
	}
	switch {
	case res.Stuck != nil:
		// The gap in grants this left is the checker's to judge.
		out.Detail += fmt.Sprintf("; a holder waited %v on itself: %v", env.AcquireBound(), res.Stuck)
	case res.Failures > env.Sections/10:
		return nil, fmt.Errorf("%d nested sections failed (not contention, errors): see the servers' logs", res.Failures)
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}

// msOf is d in milliseconds to two places: a re-entry that is granted at
// once takes a fraction of one.
func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// roundWait keeps a sub-millisecond re-entry readable.
func roundWait(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
