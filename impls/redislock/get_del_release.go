package redislock

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const getDelReleaseName = "redis-get-del-release"

func init() {
	impls.Register(impls.Spec{
		Failpoints: []string{failpoint.BetweenGetAndDel},
		Name:       getDelReleaseName,
		Summary: "redis-setnx-px's acquire (SET NX PX, fencing INCR), but released by GET, a comparison " +
			"in the client, then DEL: two commands where one atomic script is needed",
		Broken: "the owner check (GET) and the DEL are separate commands: if the lease expires between " +
			"them and another client takes the lock, the DEL deletes that client's lock",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 3, Note: "acquire script, GET, DEL"},
		Footprint:  impls.Footprint{Redis: setnxKeys},
		Page:       "docs/lessons/04-releasing-someone-elses-lock.md",
		Source:     "impls/redislock/get_del_release.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, getDelReleaseName)
			if err != nil {
				return nil, err
			}
			return &fencedLock{
				name: getDelReleaseName, rdb: rdb, ttl: cfg.TTL,
				release: getDelRelease(cfg),
			}, nil
		},
	})
}

// getDelRelease is the second wrong release of the source documents. It
// looks right, and a release that comes after the lease expired and
// another client acquired is refused, because the GET sees the other
// client's token. The flaw is the gap between the two commands: the GET
// says the lock is ours, then (a GC pause, a slow network, a scheduler)
// the lease expires, another client acquires, and our DEL, which checks
// nothing, deletes its lock. redis-setnx-px closes the gap by running the
// comparison and the DEL in one Lua script, which Redis executes atomically.
func getDelRelease(cfg impls.Config) releaseFunc {
	return func(ctx context.Context, s *tokenLease) (int64, error) {
		v, err := s.rdb.Get(ctx, lockKey(s.key)).Result()
		if errors.Is(err, redis.Nil) {
			return 0, nil // expired, and nobody holds it now
		}
		if err != nil {
			// A GET changes nothing: whatever happened, the lock is as it was.
			return 0, impls.Classify(ctx, s.name, "release", err, false)
		}
		if v != s.token {
			return 0, nil
		}
		// The window: the lock was ours at the GET, nothing guarantees it
		// still is at the DEL.
		cfg.Hit(failpoint.BetweenGetAndDel)
		n, err := s.rdb.Del(ctx, lockKey(s.key)).Result()
		if err != nil {
			return 0, impls.Classify(ctx, s.name, "release", err, true)
		}
		return n, nil
	}
}
