// Package redislock holds the single-node Redis locks: the correct one,
// redis-setnx-px, and the classic broken variants from the source documents,
// each broken exactly where the documents say and nowhere else.
package redislock

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

// fenceKey is the counter from which fencing tokens are drawn. The hash tag
// keeps it in the same slot as the lock key on a Redis Cluster.
func fenceKey(key string) string { return "{" + key + "}:fence" }

// lockKey puts the lock in the same slot as its fence counter.
func lockKey(key string) string { return "{" + key + "}" }

// client opens the lock's client on its Redis endpoint (one server, or the
// master a Sentinel group names).
func client(cfg impls.Config, name string) (redis.UniversalClient, error) {
	rdb, err := redisclient.Open(cfg.Servers[topology.Redis], cfg.TTL, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rdb, nil
}

// never is a Lost channel for leases that cannot learn they were lost.
var never = make(chan struct{})
