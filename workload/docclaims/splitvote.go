package docclaims

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/redlock" // registers redlock
	"github.com/locklab/locklab/topology"
)

// Redlock is the lock whose votes are counted: the lab's own, on five
// independent Redis nodes.
const Redlock = "redlock"

// SplitOptions configure the split-vote race.
type SplitOptions struct {
	Redis   []string // the five nodes, host:port
	Clients int
	Rounds  int // per way of retrying
	TTL     time.Duration
	// Bound ends a round nobody won (a livelock) and counts it unresolved.
	Bound time.Duration
}

// SplitRound is one race: every client's first attempt fired at one instant
// on a free lock.
type SplitRound struct {
	// Split: no client's first attempt won a majority.
	Split bool `json:"split"`
	// GrantMS is from the start to the first grant (-1: none within Bound).
	GrantMS float64 `json:"grant_ms"`
	// Attempts counts every client's attempts until the first grant, where
	// the way counts them (retrying at once); 0 where the lock's own
	// Acquire retried unseen.
	Attempts int `json:"attempts,omitempty"`
	// Errors counts attempts that failed for a slow node (unknown outcome
	// or no majority answering), not for the votes.
	Errors int `json:"errors,omitempty"`
}

// SplitResult is one way of retrying after a lost first attempt.
type SplitResult struct {
	// Backoff: the losers retried with redlock's Acquire, which waits a
	// random, doubling delay between attempts; otherwise each retried at
	// once, in a loop of single attempts.
	Backoff bool         `json:"backoff"`
	Clients int          `json:"clients"`
	TTL     string       `json:"ttl"`
	Bound   string       `json:"bound"`
	Rounds  []SplitRound `json:"rounds"`
}

// MeasureSplitVotes races opt.Clients redlock clients for a free lock,
// opt.Rounds times with the lock's random back-off and as many without.
func MeasureSplitVotes(ctx context.Context, opt SplitOptions) ([]SplitResult, error) {
	spec, err := impls.Lookup(Redlock)
	if err != nil {
		return nil, err
	}
	lockers := make([]impls.Locker, opt.Clients)
	for i := range lockers {
		l, err := spec.New(impls.Config{Servers: topology.At(spec.Backend.Kind, opt.Redis...), TTL: opt.TTL, ClientID: fmt.Sprintf("split-%d", i)})
		if err != nil {
			return nil, fmt.Errorf("redlock client %d: %w", i, err)
		}
		defer l.Close()
		lockers[i] = l
	}
	var out []SplitResult
	for _, backoff := range []bool{true, false} {
		r := SplitResult{Backoff: backoff, Clients: opt.Clients, TTL: opt.TTL.String(), Bound: opt.Bound.String()}
		for n := range opt.Rounds {
			round, err := splitRound(ctx, lockers, fmt.Sprintf("split-%v-%d", backoff, n), backoff, opt.Bound)
			if err != nil {
				return nil, err
			}
			r.Rounds = append(r.Rounds, round)
		}
		out = append(out, r)
	}
	return out, nil
}

// splitRound releases every client at one instant. Each makes one attempt;
// the round is split when none of them won. Until the first grant the
// losers go on, with the back-off or without; the first grant ends the
// round, and every lease taken is released before the next.
func splitRound(ctx context.Context, lockers []impls.Locker, key string, backoff bool, bound time.Duration) (SplitRound, error) {
	roundCtx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var (
		mu       sync.Mutex
		first    time.Duration = -1
		wonFirst bool
		attempts int
		leases   []impls.Lease
		failure  error
		errs     int
	)
	start := make(chan struct{})
	var t0 time.Time
	granted := func(l impls.Lease, isFirst bool) {
		mu.Lock()
		defer mu.Unlock()
		leases = append(leases, l)
		if first < 0 {
			first = time.Since(t0)
		}
		wonFirst = wonFirst || isFirst
		cancel()
	}
	var wg sync.WaitGroup
	for _, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			count := func() { mu.Lock(); attempts++; mu.Unlock() }
			count()
			lease, err := l.TryAcquire(roundCtx, key)
			if err == nil {
				granted(lease, true)
				return
			}
			for roundCtx.Err() == nil {
				if backoff {
					lease, err = l.Acquire(roundCtx, key)
				} else {
					count()
					lease, err = l.TryAcquire(roundCtx, key)
				}
				if err == nil {
					granted(lease, false)
					return
				}
				if !errors.Is(err, impls.ErrHeld) && roundCtx.Err() == nil {
					// A node too slow to answer in its budget (two cores,
					// ten clients, five servers): the attempt failed
					// without a verdict on the votes; the client goes on.
					mu.Lock()
					errs++
					mu.Unlock()
					if errors.Is(err, impls.ErrUnknown) || errors.Is(err, impls.ErrBackend) {
						continue
					}
					mu.Lock()
					failure = fmt.Errorf("round %s: %w", key, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	t0 = time.Now()
	close(start)
	wg.Wait()
	for _, l := range leases {
		// A release whose answer a slow node did not give in its budget
		// is no failure of the race: the next round takes another key, and
		// this one expires with its TTL.
		if err := l.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, impls.ErrUnknown) {
			return SplitRound{}, fmt.Errorf("round %s: release: %w", key, err)
		}
	}
	if failure != nil {
		return SplitRound{}, failure
	}
	r := SplitRound{Split: !wonFirst, GrantMS: -1, Errors: errs}
	if first >= 0 {
		r.GrantMS = ms(first)
	}
	if !backoff {
		r.Attempts = attempts
	}
	return r, nil
}
