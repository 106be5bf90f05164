package takeover_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/workload/takeover"
)

// TestTakeover races redis-getset clients for abandoned locks on a real
// Redis. Each grant is timed with the lease the lock reported, and each
// round has one winner (a later one only once the first's lease ended: a
// racer held back past it on a loaded machine). Losers' GETSETs land
// (Redis counts more than one per race). With one clock they mostly
// rewrite the same millisecond, and only a race that crosses a
// millisecond changes the key, so that case asserts nothing of it; with
// the clients' clocks apart, the key ends holding a loser's expiry, and in
// every round where it does the winner's own Refresh, answered within its
// lease, says it does not hold the lock.
func TestTakeover(t *testing.T) {
	ctx := context.Background()
	n, err := cluster.StartRedis(ctx, cluster.RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	tests := []struct {
		name   string
		spread time.Duration
		// mustOverwrite: some round's key must end with a loser's expiry.
		mustOverwrite bool
	}{
		{name: "one clock", spread: 0},
		{name: "clocks apart", spread: 5 * time.Millisecond, mustOverwrite: true},
	}
	const ttl = 50 * time.Millisecond
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := takeover.Measure(ctx, takeover.Options{Redis: n.Addr, Clients: 8, Rounds: 20, TTL: ttl, ClockSpread: tt.spread})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res.Rounds {
				if len(r.Grants) != r.Winners {
					t.Fatalf("round %d: %d winners but %d timed grants", i, r.Winners, len(r.Grants))
				}
				// The lease a grant reports ends at the winner's expiry,
				// which the lock stamped from its own clock (truncated to a
				// millisecond) while the request was out: within a
				// millisecond below the TTL, or above it by at most the
				// request, whatever the client's skew.
				for _, g := range r.Grants {
					if g.Start < 0 || g.Reply < g.Start || g.Lease <= ttl-time.Millisecond || g.Lease > ttl+(g.Reply-g.Start) {
						t.Errorf("round %d: %s asked at %s, answered at %s, lease %s: want a lease of the TTL %s give or take the request", i, g.Client, g.Start, g.Reply, g.Lease, ttl)
					}
				}
				if r.Winners == 0 {
					t.Errorf("round %d: no winner, though every racer asked for an abandoned lock", i)
					continue
				}
				// One winner a round: a later one must have been answered
				// after the first's lease ended (a racer held back past it
				// on a loaded machine, taking over the ended lease).
				first, last := r.Grants[0], r.Grants[len(r.Grants)-1]
				for _, g := range r.Grants[1:] {
					if g.Reply < first.Start+first.Lease {
						t.Errorf("round %d: %s was granted the lock inside %s's lease: %+v", i, g.Client, first.Client, r.Grants)
					}
				}
				// A refresh answered after the holder's lease ended is
				// refused for that alone; one answered inside it is refused
				// exactly when the key lost the holder's value.
				if r.RefreshReply < last.Start+last.Lease && r.Overwritten != r.RefreshRefused {
					t.Errorf("round %d: overwritten %v but refresh refused %v: the winner's refresh should fail exactly when its value is gone", i, r.Overwritten, r.RefreshRefused)
				}
			}
			if res.Count(func(r takeover.Round) bool { return r.GetSets > 1 }) == 0 {
				t.Errorf("no race had a loser's GETSET land: the figure cannot see an overwrite")
			}
			if tt.mustOverwrite && res.Count(func(r takeover.Round) bool { return r.Overwritten }) == 0 {
				t.Errorf("no round's key holds a loser's expiry (%+v)", res.Rounds)
			}
		})
	}
}
