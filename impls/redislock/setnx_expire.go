package redislock

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

const setnxExpireName = "redis-setnx-expire"

func init() {
	impls.Register(impls.Spec{
		Failpoints: []string{failpoint.AfterSetNX},
		Name:       setnxExpireName,
		Summary: "SETNX key token, then PEXPIRE key ttl as a second command; owner-checked Lua release " +
			"and refresh; no fencing tokens",
		Broken: "SETNX and PEXPIRE are two commands: a client that crashes between them leaves a lock " +
			"with no expiry, which nobody can ever acquire again (deadlock)",
		Caps:       impls.Capabilities{Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 3, Note: "SETNX, PEXPIRE, release script"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "{K}", Type: "string", Expires: true}}},
		Page:       "docs/lessons/02-setnx-then-expire.md",
		Source:     "impls/redislock/setnx_expire.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, setnxExpireName)
			if err != nil {
				return nil, err
			}
			return &SetNXExpire{rdb: rdb, ttl: cfg.TTL, cfg: cfg}, nil
		},
	})
}

// SetNXExpire is the first wrong acquire of the source documents, written
// the way it was with clients that had no SET ... NX PX: take the key with
// SETNX, then give it a TTL with a second command. The two are not atomic.
// If the client dies after SETNX and before PEXPIRE (failpoint.AfterSetNX),
// the key stays forever and the lock is never granted again. Everything else
// (owner-checked release and refresh) is done right, so that this is the
// only lesson.
type SetNXExpire struct {
	rdb redis.UniversalClient
	ttl time.Duration
	cfg impls.Config
}

func (l *SetNXExpire) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.try(ctx, key)
}

func (l *SetNXExpire) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		// No hint: SETNX does not say how long the holder has left, and
		// asking would be a third command.
		lease, err := l.try(ctx, key)
		return lease, 0, err
	})
}

func (l *SetNXExpire) Close() error { return l.rdb.Close() }

func (l *SetNXExpire) try(ctx context.Context, key string) (impls.Lease, error) {
	token, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(setnxExpireName, "acquire", impls.ErrBackend, err)
	}
	// The SETNX command itself, as in the sources (go-redis's SetNX sends
	// SET ... NX instead).
	n, err := l.rdb.Do(ctx, "SETNX", lockKey(key), token).Int64()
	if err != nil {
		return nil, impls.Classify(ctx, setnxExpireName, "acquire", err, true)
	}
	if n == 0 {
		return nil, impls.Fail(setnxExpireName, "acquire", impls.ErrHeld, nil)
	}
	// The flaw: from here until PEXPIRE is applied the key has no expiry. A
	// crash here is a lock held forever.
	l.cfg.Hit(failpoint.AfterSetNX)
	ok, err := l.rdb.PExpire(ctx, lockKey(key), l.ttl).Result()
	if err != nil {
		return nil, l.undo(ctx, key, token, err)
	}
	if !ok {
		// Somebody deleted our key between the two commands (a plain DEL
		// from outside): we hold nothing.
		return nil, impls.Fail(setnxExpireName, "acquire", impls.ErrBackend,
			errors.New("lock key vanished before its expiry was set"))
	}
	return &tokenLease{
		name: setnxExpireName, rdb: l.rdb, ttl: l.ttl, key: key, token: token,
		release: ownerCheckedRelease,
	}, nil
}

// undo handles a PEXPIRE that failed while the client lives on: the key is
// ours with no expiry and the caller gets no lease to release it with, so
// delete it (owner-checked) rather than leave the deadlock the flaw is about
// to an error path. Only a crash should leave it, which is the lesson. The
// caller's context may be what ended, so the cleanup gets its own.
func (l *SetNXExpire) undo(ctx context.Context, key, token string, cause error) error {
	kind := impls.ErrBackend
	if err := impls.ContextErr(ctx); err != nil {
		kind = err
	}
	cctx, cancel := context.WithTimeout(context.Background(), l.ttl)
	defer cancel()
	if _, err := redisclient.ReleaseScript.Run(cctx, l.rdb, []string{lockKey(key)}, token).Int64(); err != nil {
		// The key may still be ours, with no expiry.
		return impls.Fail(setnxExpireName, "acquire", impls.ErrUnknown, errors.Join(cause, err))
	}
	// Deleted, or already gone: either way we hold nothing.
	return impls.Fail(setnxExpireName, "acquire", kind, cause)
}
