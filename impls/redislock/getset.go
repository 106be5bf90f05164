package redislock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const getsetName = "redis-getset"

func init() {
	impls.Register(impls.Spec{
		Name: getsetName,
		Summary: "SETNX key <client clock + ttl>; a lock whose timestamp passed by the client's clock is " +
			"taken over with GETSET; released by a plain DEL; the key has no Redis TTL",
		Broken: "expiry is judged by each client's own clock, GETSET overwrites the winner's expiry, " +
			"and DEL releases anyone's lock",
		Caps:       impls.Capabilities{Expiry: true, Validity: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "SETNX, DEL (GETSET only when taking over an expired lock)"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "{K}", Type: "string"}}}, // "the key has no Redis TTL"
		Page:       "docs/lessons/03-getset-timestamp.md",
		Source:     "impls/redislock/getset.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, getsetName)
			if err != nil {
				return nil, err
			}
			return &GetSet{name: getsetName, rdb: rdb, ttl: cfg.TTL, cfg: cfg}, nil
		},
	})
	impls.Register(impls.Spec{
		Name: getsetOwnExpiryName,
		Summary: "redis-getset, but its release first checks its own expiry by its own clock and DELs only " +
			"if it has not passed (003_a6064ed1f179a5a2.txt's variant)",
		Broken: "expiry is still judged by each client's own clock and a losing GETSET still overwrites the " +
			"winner's expiry; the check and the DEL are two steps, and the check reads the expiry the " +
			"holder wrote, not the one the key holds",
		Caps:       impls.Capabilities{Expiry: true, Validity: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "SETNX, DEL (GETSET only when taking over an expired lock; no DEL once the holder's own expiry passed)"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "{K}", Type: "string"}}},
		Page:       "docs/lessons/03-getset-timestamp.md",
		Source:     "impls/redislock/getset.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, getsetOwnExpiryName)
			if err != nil {
				return nil, err
			}
			return &GetSet{name: getsetOwnExpiryName, checkOwnExpiry: true, rdb: rdb, ttl: cfg.TTL, cfg: cfg}, nil
		},
	})
}

// getsetOwnExpiryName is the variant of 003_a6064ed1f179a5a2.txt: after its
// work the holder checks whether its lock has timed out and deletes it only
// if not, so as not to delete a lock another client took over.
const getsetOwnExpiryName = "redis-getset-own-expiry"

// GetSet is the second wrong acquire of the source documents, the
// "client timestamp" lock from the days before SET ... NX PX. The key holds
// the time, in Unix milliseconds by the acquiring client's clock, at which
// the lease ends; Redis itself never expires it. To acquire:
//
//  1. SETNX key <now + ttl>: granted if nobody holds the lock.
//  2. Otherwise GET the timestamp. If it has not passed by our clock, the
//     lock is held.
//  3. If it has passed, GETSET key <now + ttl>. Only the client whose GETSET
//     returns the very timestamp it read is granted the lock: when several
//     race for an expired lock, the first GETSET returns the old value and
//     every later one returns the first one's.
//
// The three flaws the sources name:
//
//   - The clocks of all clients must agree. Expiry is decided by whoever
//     reads the timestamp, on its own clock: a client whose clock runs ahead
//     takes a lock that is still valid by its holder's clock, and two
//     clients then hold it.
//   - When several clients race for an expired lock, one wins, but every
//     loser's GETSET has already overwritten the value with its own expiry.
//     The winner's lock now ends when a loser said, and the winner's value is
//     gone from the key (so its Refresh fails although it holds the lock).
//   - The value is a time, not an owner: release is a plain DEL, so a client
//     whose lease passed deletes the lock of whoever took it over, and any
//     client can release any lock. (One source suggests checking one's own
//     timestamp before the DEL; that narrows the window but does not close
//     it, since the check and the DEL are two steps and the check uses the
//     client's clock again.)
//
// Everything else is done right: Refresh compares and extends atomically
// and never revives a passed lease.
type GetSet struct {
	name string
	// checkOwnExpiry is 003's variant: Release skips the DEL when the
	// lease has passed by this client's clock.
	checkOwnExpiry bool
	rdb            redis.UniversalClient
	ttl            time.Duration
	cfg            impls.Config
}

func (l *GetSet) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	lease, _, err := l.try(ctx, key)
	return lease, err
}

func (l *GetSet) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		return l.try(ctx, key)
	})
}

func (l *GetSet) Close() error { return l.rdb.Close() }

func (l *GetSet) try(ctx context.Context, key string) (impls.Lease, time.Duration, error) {
	stamp := l.cfg.Now().Add(l.ttl).UnixMilli()
	value := strconv.FormatInt(stamp, 10)
	n, err := l.rdb.Do(ctx, "SETNX", lockKey(key), value).Int64()
	if err != nil {
		return nil, 0, impls.Classify(ctx, l.name, "acquire", err, true)
	}
	if n == 1 {
		return l.lease(key, value, stamp), 0, nil
	}

	current, err := l.rdb.Get(ctx, lockKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		// Released since our SETNX. As in the sources this attempt fails;
		// the next one (Acquire polls) will find the lock free.
		return nil, 0, impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	}
	if err != nil {
		// SETNX changed nothing and GET changes nothing.
		return nil, 0, impls.Classify(ctx, l.name, "acquire", err, false)
	}
	held, err := strconv.ParseInt(current, 10, 64)
	if err != nil {
		return nil, 0, impls.Fail(l.name, "acquire", impls.ErrBackend,
			fmt.Errorf("lock key holds %q, not a timestamp: %w", current, err))
	}
	// Flaw 1: "has it passed?" is answered by this client's clock, not the
	// holder's. The clock is read again here, as in the sources.
	now := l.cfg.Now().UnixMilli()
	if held >= now {
		return nil, time.Duration(held-now) * time.Millisecond, impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	}

	// GETSET (deprecated since Redis 6.2) is the lock this file demonstrates (the sources' recipe), not a choice to update.
	old, err := l.rdb.GetSet(ctx, lockKey(key), value).Result()
	switch {
	case errors.Is(err, redis.Nil):
		// The key was deleted after our GET, so our GETSET created it: we
		// are its only writer, just as if SETNX had granted it. (The sources
		// report failure here and leave the key behind until it passes.)
		return l.lease(key, value, stamp), 0, nil
	case err != nil:
		// The GETSET may have been applied, and granted us the lock.
		return nil, 0, impls.Classify(ctx, l.name, "acquire", err, true)
	case old == current:
		return l.lease(key, value, stamp), 0, nil
	default:
		// Flaw 2: we lost the race, but our GETSET has already replaced the
		// winner's expiry with ours.
		return nil, 0, impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	}
}

func (l *GetSet) lease(key, value string, stamp int64) *getsetLease {
	return &getsetLease{l: l, key: key, value: value, stamp: stamp}
}

// getsetRefreshScript replaces our timestamp with a later one only if the
// key still holds ours and it has not passed by the refreshing client's
// clock (ARGV[3]): a passed lease may already be someone else's by their
// clock, so it must not be revived.
var getsetRefreshScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] and tonumber(v) >= tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
`)

type getsetLease struct {
	l   *GetSet
	key string

	mu       sync.Mutex
	value    string // what we wrote: our timestamp, formatted
	stamp    int64  // Unix ms by our clock at which the lease ends
	released bool
}

func (s *getsetLease) Key() string           { return s.key }
func (s *getsetLease) Token() (uint64, bool) { return 0, false }
func (s *getsetLease) Lost() <-chan struct{} { return never }
func (s *getsetLease) String() string        { return s.key + "@" + s.value }

// ValidUntil is the end of the lease by this client's clock, the only clock
// the lock knows; other clients judge it by theirs.
func (s *getsetLease) ValidUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.UnixMilli(s.stamp)
}

func (s *getsetLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(s.l.name, "refresh", impls.ErrNotHeld, nil)
	}
	now := s.l.cfg.Now()
	stamp := now.Add(s.l.ttl).UnixMilli()
	value := strconv.FormatInt(stamp, 10)
	n, err := getsetRefreshScript.Run(ctx, s.l.rdb, []string{lockKey(s.key)}, s.value, value, now.UnixMilli()).Int64()
	if err != nil {
		return impls.Classify(ctx, s.l.name, "refresh", err, true)
	}
	if n == 0 {
		return impls.Fail(s.l.name, "refresh", impls.ErrNotHeld, nil)
	}
	s.value, s.stamp = value, stamp
	return nil
}

// Release is flaw 3: a plain DEL of whatever the key holds (in 003's
// variant, only while our own lease has not passed by our clock).
func (s *getsetLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	if s.l.checkOwnExpiry && s.l.cfg.Now().UnixMilli() > s.stamp {
		// 003's check: our lease has passed by our clock, so the lock may be
		// someone else's now; leave it. (Between this check and the DEL
		// below the lease can still pass: two steps, as in lesson 4.)
		s.released = true
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	n, err := s.l.rdb.Del(ctx, lockKey(s.key)).Result()
	if err != nil {
		return impls.Classify(ctx, s.l.name, "release", err, true)
	}
	s.released = true
	if n == 0 {
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	return nil
}
