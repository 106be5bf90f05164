package takeover_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/workload/takeover"
)

// TestTakeover races redis-getset clients for abandoned locks on a real
// Redis. Exactly one racer wins each round. Losers' GETSETs land (Redis
// counts more than one per race). With one clock they mostly rewrite the
// same millisecond, and only a race that crosses a millisecond changes the
// key, so that case asserts nothing of it; with the clients' clocks apart,
// the key ends holding a loser's expiry, and in every round where it does
// the winner's own Refresh says it does not hold the lock.
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := takeover.Measure(ctx, takeover.Options{Redis: n.Addr, Clients: 8, Rounds: 20, TTL: 50 * time.Millisecond, ClockSpread: tt.spread})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res.Rounds {
				if r.Winners != 1 {
					t.Errorf("round %d: %d winners, want 1", i, r.Winners)
				}
				if r.Overwritten != r.RefreshRefused {
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
