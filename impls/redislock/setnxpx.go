package redislock

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

const setnxPXName = "redis-setnx-px"

// setnxKeys is what redis-setnx-px keeps on Redis for a held key, and so
// every lock built on its acquire script: the lock key, expiring with the
// lease, and the fencing counter beside it, which outlives every lease.
var setnxKeys = []impls.RedisKey{
	{Name: "{K}", Type: "string", Expires: true},
	{Name: "{K}:fence", Type: "string", IsToken: true},
}

func init() {
	impls.Register(impls.Spec{
		Name:       setnxPXName,
		Summary:    "SET key token NX PX ttl; owner-checked Lua release and refresh; fencing token from an INCR in the same script",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "acquire script (SET NX PX + INCR), release script (GET + DEL)"},
		Footprint:  impls.Footprint{Redis: setnxKeys},
		Page:       "docs/lessons/05-lease-expires-under-a-pause.md",
		Source:     "impls/redislock/setnxpx.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, setnxPXName)
			if err != nil {
				return nil, err
			}
			return NewSetNXPX(rdb, cfg.TTL), nil
		},
	})
}

// acquireScript grants the lock with SET NX PX and, in the same atomic step,
// draws the next fencing token. It returns {1, token} on a grant and
// {0, pttl} when the lock is held. The two answers differ in their first
// element, never in a number's sign: a key with no expiry (SET by hand, or
// left by a client that died between SETNX and EXPIRE) has PTTL -1, and an
// earlier version that returned -PTTL handed every client a "grant" with
// token 1 (the adversarial suite's LockKeyWithoutExpiry). A counter that is
// not a positive integer (garbled by hand) gives no token: the key is given
// back and the script fails, rather than holding a lock nobody was granted.
var acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = redis.pcall('INCR', KEYS[2])
  if type(fence) ~= 'number' or fence < 1 then
    redis.call('DEL', KEYS[1])
    if type(fence) == 'table' and fence.err then
      return redis.error_reply('fencing counter ' .. KEYS[2] .. ': ' .. fence.err)
    end
    return redis.error_reply('fencing counter ' .. KEYS[2] .. ' is not positive: ' .. tostring(fence))
  end
  return {1, fence}
end
return {0, redis.call('PTTL', KEYS[1])}
`)

// SetNXPX is the correct single-node Redis lock.
type SetNXPX struct {
	rdb redis.UniversalClient
	ttl time.Duration
	// name is the registered name errors carry (redis-setnx-px, or the
	// variant that waits for replicas).
	name string
	// acquire, when set, replaces the plain acquire script: it runs the
	// script and says whether the grant stands (redis-setnx-px-wait runs
	// it and its WAIT on one connection to the key's master). It answers
	// as runAcquire does; an *impls.Error it returns is passed on as is.
	acquire func(ctx context.Context, key, token string) (bool, int64, error)
}

// NewSetNXPX builds the lock on an existing client; the lock owns it from now on.
func NewSetNXPX(rdb redis.UniversalClient, ttl time.Duration) *SetNXPX {
	return &SetNXPX{rdb: rdb, ttl: ttl, name: setnxPXName}
}

func (l *SetNXPX) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	lease, _, err := l.try(ctx, key)
	return lease, err
}

func (l *SetNXPX) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		return l.try(ctx, key)
	})
}

func (l *SetNXPX) try(ctx context.Context, key string) (impls.Lease, time.Duration, error) {
	token, err := impls.NewToken()
	if err != nil {
		return nil, 0, impls.Fail(l.name, "acquire", impls.ErrBackend, err)
	}
	acquire := func(ctx context.Context, key, token string) (bool, int64, error) {
		return runAcquire(ctx, setnxAcquireScript(), l.rdb, key, token, l.ttl)
	}
	if l.acquire != nil {
		acquire = l.acquire
	}
	granted, n, err := acquire(ctx, key, token)
	if err != nil {
		err = impls.Classify(ctx, l.name, "acquire", err, true)
		return nil, 0, err
	}
	if !granted {
		// n is the holder's PTTL: how long it has left (-1: no expiry).
		return nil, time.Duration(n) * time.Millisecond, impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	}
	return &setnxLease{l: l, key: key, token: token, fence: uint64(n)}, 0, nil
}

func (l *SetNXPX) Close() error { return l.rdb.Close() }

type setnxLease struct {
	l     *SetNXPX
	key   string
	token string
	fence uint64

	mu       sync.Mutex
	released bool
}

func (s *setnxLease) Key() string           { return s.key }
func (s *setnxLease) Token() (uint64, bool) { return s.fence, true }
func (s *setnxLease) Lost() <-chan struct{} { return never }
func (s *setnxLease) String() string        { return s.key + "#" + strconv.FormatUint(s.fence, 10) }

func (s *setnxLease) Refresh(ctx context.Context) error {
	n, err := redisclient.RefreshScript.Run(ctx, s.l.rdb, []string{lockKey(s.key)}, s.token, s.l.ttl.Milliseconds()).Int64()
	if err != nil {
		return impls.Classify(ctx, s.l.name, "refresh", err, true)
	}
	if n == 0 {
		return impls.Fail(s.l.name, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

func (s *setnxLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	n, err := setnxReleaseScript().Run(ctx, s.l.rdb, []string{lockKey(s.key)}, s.token).Int64()
	if err != nil {
		return impls.Classify(ctx, s.l.name, "release", err, true)
	}
	s.released = true
	if n == 0 {
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	return nil
}
