// Package takeover races clients of the redis-getset lock for a lock whose
// holder went away, on a real Redis, and records what the source documents
// warn of: every loser whose GETSET landed after the winner's has already
// replaced the winner's expiry with its own, so the key no longer holds
// the holder's value. Nothing is forced: each round abandons a lock, waits
// for its timestamp to pass, and lets the clients find it together.
package takeover

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/redislock" // registers redis-getset
	"github.com/locklab/locklab/topology"
)

// Lock is the lock raced for.
const Lock = "redis-getset"

// Options configure a measurement.
type Options struct {
	Redis   string // the Redis the lab started, host:port
	Clients int    // clients racing for each abandoned lock
	Rounds  int
	TTL     time.Duration // every client's lease, the abandoned holder's too
	// ClockSpread sets the racers' clocks apart, evenly from -ClockSpread
	// to +ClockSpread of the machine's, as the clocks of separate machines
	// are; zero gives every client the one clock of this machine.
	ClockSpread time.Duration
}

// Round is what one race for an abandoned lock left behind.
type Round struct {
	Winners int `json:"winners"` // clients granted the lock (one, or none)
	// GetSets is how many GETSETs Redis ran in the race (INFO
	// commandstats): each beyond the winner's is a loser's overwrite.
	GetSets int64 `json:"getsets"`
	// Overwritten: the key's expiry is not the one the winner was granted.
	Overwritten bool `json:"overwritten"`
	// DriftMS is the stored expiry minus the winner's, in milliseconds.
	DriftMS int64 `json:"drift_ms"`
	// RefreshRefused: the winner, holding the lock, was told by Refresh
	// that it does not.
	RefreshRefused bool `json:"refresh_refused"`
}

// Result is every round of a measurement, with its settings.
type Result struct {
	Clients     int     `json:"clients"`
	TTL         string  `json:"ttl"`
	ClockSpread string  `json:"clock_spread"`
	Rounds      []Round `json:"rounds"`
}

// Count returns how many rounds f holds for.
func (r Result) Count(f func(Round) bool) int {
	n := 0
	for _, x := range r.Rounds {
		if f(x) {
			n++
		}
	}
	return n
}

// Measure runs opt.Rounds races.
func Measure(ctx context.Context, opt Options) (Result, error) {
	if opt.Clients < 2 || opt.Rounds <= 0 || opt.TTL <= 0 {
		return Result{}, fmt.Errorf("takeover: need two clients or more, rounds and a TTL (got %d, %d, %s)", opt.Clients, opt.Rounds, opt.TTL)
	}
	spec, err := impls.Lookup(Lock)
	if err != nil {
		return Result{}, err
	}
	newLocker := func(id string, skew time.Duration) (impls.Locker, error) {
		return spec.New(impls.Config{Servers: topology.At(spec.Backend.Kind, opt.Redis), TTL: opt.TTL, ClientID: id,
			Clock: func() time.Time { return time.Now().Add(skew) }})
	}
	rdb := redis.NewClient(&redis.Options{Addr: opt.Redis})
	defer rdb.Close()
	lockers := make([]impls.Locker, opt.Clients+1) // the last is the holder that goes away
	for i := range lockers {
		var skew time.Duration
		if i < opt.Clients {
			skew = -opt.ClockSpread + 2*opt.ClockSpread*time.Duration(i)/time.Duration(opt.Clients-1)
		}
		l, err := newLocker(fmt.Sprintf("client-%d", i), skew)
		if err != nil {
			return Result{}, fmt.Errorf("takeover: %w", err)
		}
		defer l.Close()
		lockers[i] = l
	}
	res := Result{Clients: opt.Clients, TTL: opt.TTL.String(), ClockSpread: opt.ClockSpread.String()}
	for i := 0; i < opt.Rounds; i++ {
		r, err := round(ctx, rdb, lockers[:opt.Clients], lockers[opt.Clients], fmt.Sprintf("takeover-%d", i), opt.TTL+2*opt.ClockSpread)
		if err != nil {
			return Result{}, fmt.Errorf("takeover, round %d: %w", i+1, err)
		}
		res.Rounds = append(res.Rounds, r)
	}
	return res, nil
}

// storedKey is where redis-getset keeps a key's timestamp (its keys are
// wrapped in a hash tag; see impls/redislock).
func storedKey(key string) string { return "{" + key + "}" }

// round abandons a lock and waits until every racer's clock has passed
// it (wait), then races them for it once each.
func round(ctx context.Context, rdb *redis.Client, racers []impls.Locker, holder impls.Locker, key string, wait time.Duration) (Round, error) {
	// A holder takes the lock and goes away without releasing it, as a
	// crashed one would; its timestamp is all that is left.
	if _, err := holder.Acquire(ctx, key); err != nil {
		return Round{}, fmt.Errorf("the first holder: %w", err)
	}
	time.Sleep(wait + 5*time.Millisecond)
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return Round{}, fmt.Errorf("CONFIG RESETSTAT: %w", err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		leases []impls.Lease
		errs   []error
		start  = make(chan struct{})
	)
	for _, l := range racers {
		wg.Add(1)
		go func(l impls.Locker) {
			defer wg.Done()
			<-start
			lease, err := l.TryAcquire(ctx, key)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				leases = append(leases, lease)
			case !errors.Is(err, impls.ErrHeld):
				errs = append(errs, err)
			}
		}(l)
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Round{}, err
	}
	r := Round{Winners: len(leases)}
	var err error
	if r.GetSets, err = getsets(ctx, rdb); err != nil {
		return Round{}, err
	}
	if len(leases) == 1 {
		stored, err := rdb.Get(ctx, storedKey(key)).Int64()
		if err != nil {
			return Round{}, fmt.Errorf("read the stored expiry: %w", err)
		}
		granted := leases[0].(impls.Deadliner).ValidUntil().UnixMilli()
		r.DriftMS = stored - granted
		r.Overwritten = stored != granted
		switch err := leases[0].Refresh(ctx); {
		case errors.Is(err, impls.ErrNotHeld):
			r.RefreshRefused = true
		case err != nil:
			return Round{}, fmt.Errorf("the winner's refresh: %w", err)
		}
	}
	if err := rdb.Del(ctx, storedKey(key)).Err(); err != nil {
		return Round{}, fmt.Errorf("clear the key: %w", err)
	}
	return r, nil
}

// getsets reads how many GETSETs Redis ran since the last reset.
func getsets(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO commandstats: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_getset:calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		return strconv.ParseInt(n, 10, 64)
	}
	return 0, nil // no GETSET ran
}
