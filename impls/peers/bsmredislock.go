package peers

import (
	"context"
	"errors"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const bsmName = "peer-redislock"

// bsmRetryMin is the shortest wait the library's documentation recommends
// for its ExponentialBackoff; bsmRetryMax caps the doubling so that a waiter
// notices a free lock about as soon as the lab's own polling locks do.
const (
	bsmRetryMin = 16 * time.Millisecond
	bsmRetryMax = 64 * time.Millisecond
)

func init() {
	impls.Register(impls.Spec{
		Name: bsmName,
		Summary: "bsm/redislock " + bsmRedislockVer + ": Obtain (SET NX PX in Lua) with the library's " +
			"ExponentialBackoff retry; owner-checked Lua refresh and release; no fencing token",
		Peer:       true,
		Caps:       impls.Capabilities{Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "obtain script, release script"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "K", Type: "string", Expires: true}}},
		Page:       "docs/lessons/05-lease-expires-under-a-pause.md",
		Source:     "impls/peers/bsmredislock.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			clients, err := redisClients(cfg, bsmName, 1)
			if err != nil {
				return nil, err
			}
			return &BSMRedisLock{rdb: clients[0], client: redislock.New(clients[0]), ttl: cfg.TTL}, nil
		},
	})
}

// BSMRedisLock adapts github.com/bsm/redislock: every lock call is one call
// of the library, with its own scripts and retry loop.
type BSMRedisLock struct {
	rdb    redis.UniversalClient
	client *redislock.Client
	ttl    time.Duration
}

// TryAcquire is Obtain with no retry strategy, which the library defaults to:
// one SET NX PX script.
func (l *BSMRedisLock) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	lock, err := l.client.Obtain(ctx, key, l.ttl, nil)
	if err != nil {
		return nil, l.obtainErr(ctx, err)
	}
	return &bsmLease{l: l, lock: lock}, nil
}

// Acquire is Obtain with the library's ExponentialBackoff. When ctx carries no
// deadline, Obtain gives itself one of a single TTL ("make sure we don't retry
// forever") and returns that deadline's error; since our Acquire waits until
// its caller's ctx ends, we call Obtain again in that one case. Each call
// draws a fresh token, and the Lua script never grants a lock holding another
// token, so a repeated call cannot be granted on the strength of an earlier one.
func (l *BSMRedisLock) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	for {
		opts := &redislock.Options{RetryStrategy: redislock.ExponentialBackoff(bsmRetryMin, bsmRetryMax)}
		lock, err := l.client.Obtain(ctx, key, l.ttl, opts)
		if err == nil {
			return &bsmLease{l: l, lock: lock}, nil
		}
		// Only the library's own deadline, never a request on the wire, ends
		// Obtain with the bare context error while our ctx is still live: a
		// cut request comes back from go-redis as a network timeout instead.
		if err == context.DeadlineExceeded && impls.ContextErr(ctx) == nil {
			continue
		}
		return nil, l.obtainErr(ctx, err)
	}
}

func (l *BSMRedisLock) obtainErr(ctx context.Context, err error) error {
	if errors.Is(err, redislock.ErrNotObtained) {
		return impls.Fail(bsmName, "acquire", impls.ErrHeld, err)
	}
	if ctxErr := impls.ContextErr(ctx); ctxErr != nil && errors.Is(err, ctxErr) {
		// Obtain returns ctx.Err() itself when the context ends between tries,
		// with no request outstanding.
		return impls.Fail(bsmName, "acquire", ctxErr, err)
	}
	return impls.Classify(ctx, bsmName, "acquire", err, true)
}

func (l *BSMRedisLock) Close() error { return l.rdb.Close() }

type bsmLease struct {
	l    *BSMRedisLock
	lock *redislock.Lock
}

func (s *bsmLease) Key() string           { return s.lock.Key() }
func (s *bsmLease) Token() (uint64, bool) { return 0, false }
func (s *bsmLease) Lost() <-chan struct{} { return never }

// Refresh is the library's owner-checked PEXPIRE script; it reports a lock
// that is gone or another's as ErrNotObtained.
func (s *bsmLease) Refresh(ctx context.Context) error {
	err := s.lock.Refresh(ctx, s.l.ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return impls.Fail(bsmName, "refresh", impls.ErrNotHeld, err)
	}
	return impls.Classify(ctx, bsmName, "refresh", err, true)
}

// Release is the library's owner-checked DEL script. A second release finds
// the key gone (or another's) and gets ErrLockNotHeld from the library itself.
func (s *bsmLease) Release(ctx context.Context) error {
	err := s.lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return impls.Fail(bsmName, "release", impls.ErrNotHeld, err)
	}
	return impls.Classify(ctx, bsmName, "release", err, true)
}
