package redislock

import (
	"context"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const delReleaseName = "redis-del-release"

func init() {
	impls.Register(impls.Spec{
		Name: delReleaseName,
		Summary: "redis-setnx-px's acquire (SET NX PX, fencing INCR), but released by a plain DEL " +
			"that checks no owner",
		Broken:     "release is a plain DEL: a holder whose lease expired deletes the next holder's lock",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "acquire script, DEL"},
		Footprint:  impls.Footprint{Redis: setnxKeys},
		Page:       "docs/lessons/04-releasing-someone-elses-lock.md",
		Source:     "impls/redislock/del_release.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, delReleaseName)
			if err != nil {
				return nil, err
			}
			return &fencedLock{
				name: delReleaseName, rdb: rdb, ttl: cfg.TTL,
				release: delRelease,
			}, nil
		},
	})
}

// delRelease is the first wrong release of the source documents: DEL the key
// without asking whose it is. As long as every holder releases before its
// TTL runs out nothing goes wrong, which is why the flaw survives testing;
// once a lease expires and another client takes the lock, the late DEL of
// the first holder frees the second holder's lock, and a third client gets
// in beside it. Any client, holder or not, can release the lock this way.
func delRelease(ctx context.Context, s *tokenLease) (int64, error) {
	n, err := s.rdb.Del(ctx, lockKey(s.key)).Result()
	if err != nil {
		return 0, impls.Classify(ctx, s.name, "release", err, true)
	}
	return n, nil
}
