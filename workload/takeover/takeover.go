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
	"sort"
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
	// Winners is how many clients were granted the lock: one, or none,
	// or, when a racer held back past the first winner's lease found it
	// passed, a later one too (each in Grants).
	Winners int `json:"winners"`
	// Grants is each winner's grant, in the order of their replies; the
	// last is the holder the checks below ask about.
	Grants []Grant `json:"grants,omitempty"`
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
	// RefreshStart and RefreshReply bound the winner's Refresh on the
	// round's clock (as Grant's): one made after its lease ended by its
	// own clock is refused for that alone, whatever the key holds.
	RefreshStart time.Duration `json:"refresh_start_ns,omitempty"`
	RefreshReply time.Duration `json:"refresh_reply_ns,omitempty"`
}

// Grant is one winner's grant, timed on this machine's monotonic clock
// from the moment the racers were let go: Start just before its acquire
// was sent, Reply just after the lock answered, so the grant itself
// happened between the two. Lease is how long after Start the lease the
// lock reported ends: its expiry (ValidUntil, by the winner's own clock,
// which is the clock the lock judges it by) minus the winner's clock at
// Start. Its lease ends at Start+Lease whatever the client's skew, since
// both are read on its one clock.
type Grant struct {
	Client string        `json:"client"`
	Start  time.Duration `json:"start_ns"`
	Reply  time.Duration `json:"reply_ns"`
	Lease  time.Duration `json:"lease_ns"`
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
	clients := make([]racer, opt.Clients+1) // the last is the holder that goes away
	for i := range clients {
		var skew time.Duration
		if i < opt.Clients {
			skew = -opt.ClockSpread + 2*opt.ClockSpread*time.Duration(i)/time.Duration(opt.Clients-1)
		}
		name := fmt.Sprintf("client-%d", i)
		l, err := newLocker(name, skew)
		if err != nil {
			return Result{}, fmt.Errorf("takeover: %w", err)
		}
		defer l.Close()
		clients[i] = racer{name: name, l: l, skew: skew}
	}
	res := Result{Clients: opt.Clients, TTL: opt.TTL.String(), ClockSpread: opt.ClockSpread.String()}
	for i := 0; i < opt.Rounds; i++ {
		r, err := round(ctx, rdb, clients[:opt.Clients], clients[opt.Clients].l, fmt.Sprintf("takeover-%d", i), opt.TTL, opt.TTL+2*opt.ClockSpread)
		if err != nil {
			return Result{}, fmt.Errorf("takeover, round %d: %w", i+1, err)
		}
		res.Rounds = append(res.Rounds, r)
	}
	return res, nil
}

// racer is one client of the race, with the skew of its clock from this
// machine's (which its grant's lease is converted by).
type racer struct {
	name string
	l    impls.Locker
	skew time.Duration
}

// storedKey is where redis-getset keeps a key's timestamp (its keys are
// wrapped in a hash tag; see impls/redislock).
func storedKey(key string) string { return "{" + key + "}" }

// granted is a winner's lease with its timing.
type granted struct {
	lease impls.Lease
	Grant
}

// round abandons a lock and waits until every racer's clock has passed
// it (wait), then races them for it once each, timing every grant (ttl is
// the lease of a lock that does not report its expiry).
func round(ctx context.Context, rdb *redis.Client, racers []racer, holder impls.Locker, key string, ttl, wait time.Duration) (Round, error) {
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
		grants []granted
		errs   []error
		start  = make(chan struct{})
		origin time.Time // when the racers were let go: every time below is since it
	)
	for _, c := range racers {
		wg.Add(1)
		go func(c racer) {
			defer wg.Done()
			<-start
			began := time.Now()
			lease, err := c.l.TryAcquire(ctx, key)
			replied := time.Now()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				grants = append(grants, granted{lease: lease, Grant: Grant{Client: c.name,
					Start: began.Sub(origin), Reply: replied.Sub(origin), Lease: leaseFrom(lease, began.Add(c.skew), ttl)}})
			case !errors.Is(err, impls.ErrHeld):
				errs = append(errs, err)
			}
		}(c)
	}
	origin = time.Now()
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Round{}, err
	}
	sort.Slice(grants, func(i, j int) bool { return grants[i].Reply < grants[j].Reply })
	r := Round{Winners: len(grants)}
	for _, g := range grants {
		r.Grants = append(r.Grants, g.Grant)
	}
	var err error
	if r.GetSets, err = getsets(ctx, rdb); err != nil {
		return Round{}, err
	}
	// The last winner holds the lock now (an earlier one's lease had
	// ended, or the checker finds two holders): its expiry is the one the
	// key should hold, and its Refresh the one that should succeed.
	if len(grants) > 0 {
		last := grants[len(grants)-1]
		stored, err := rdb.Get(ctx, storedKey(key)).Int64()
		if err != nil {
			return Round{}, fmt.Errorf("read the stored expiry: %w", err)
		}
		want := last.lease.(impls.Deadliner).ValidUntil().UnixMilli()
		r.DriftMS = stored - want
		r.Overwritten = stored != want
		r.RefreshStart = time.Since(origin)
		err = last.lease.Refresh(ctx)
		r.RefreshReply = time.Since(origin)
		switch {
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

// leaseFrom is how long after began (read on the winner's own clock, as
// the lock reads it) the lease the lock granted ends: its reported expiry
// minus began, or ttl for a lock that reports none.
func leaseFrom(l impls.Lease, began time.Time, ttl time.Duration) time.Duration {
	d, ok := l.(impls.Deadliner)
	if !ok {
		return ttl
	}
	return d.ValidUntil().Sub(began)
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
