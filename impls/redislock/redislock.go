// Package redislock holds the single-node Redis locks: the correct one,
// redis-setnx-px, and the classic broken variants from the source documents,
// each broken exactly where the documents say and nowhere else.
package redislock

import (
	"fmt"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// fenceKey is the counter from which fencing tokens are drawn. The hash tag
// keeps it in the same slot as the lock key on a Redis Cluster.
func fenceKey(key string) string { return "{" + key + "}:fence" }

// lockKey puts the lock in the same slot as its fence counter.
func lockKey(key string) string { return "{" + key + "}" }

func firstAddr(cfg impls.Config, name string) (string, error) {
	if len(cfg.Addrs(topology.Redis)) == 0 {
		return "", fmt.Errorf("%s: no Redis address configured", name)
	}
	return cfg.Addrs(topology.Redis)[0], nil
}

// never is a Lost channel for leases that cannot learn they were lost.
var never = make(chan struct{})
