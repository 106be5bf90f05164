// Package redislock holds the single-node Redis locks: the correct one,
// redis-setnx-px, and the classic broken variants from the source documents,
// each broken exactly where the documents say and nowhere else.
package redislock

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// NewClient returns a go-redis client tuned for locking: no automatic
// retries (a retried SET NX whose first reply was lost would report "held"
// for a lock we hold), and timeouts well under the TTL, so that a stalled
// server turns into an error before the lease runs out.
func NewClient(addr string, ttl time.Duration) *redis.Client {
	return redis.NewClient(ClientOptions(addr, ttl))
}

// ClientOptions are NewClient's settings, for a client that must differ
// in a timeout or its pool (a connection that blocks in BLPOP) and in
// nothing else.
func ClientOptions(addr string, ttl time.Duration) *redis.Options {
	t := ttl / 4
	if t < 50*time.Millisecond {
		t = 50 * time.Millisecond
	}
	if t > time.Second {
		t = time.Second
	}
	return &redis.Options{
		Addr:       addr,
		MaxRetries: -1,
		// One dial per request: go-redis would otherwise retry a refused
		// dial 5 times, 100ms apart, hiding a dead server for half a second.
		DialerRetries: 1,
		DialTimeout:   time.Second,
		ReadTimeout:   t,
		WriteTimeout:  t,
		PoolSize:      4,
		// A lock client must see a cut connection as an error, not hide it.
		ContextTimeoutEnabled: true,
	}
}

// fenceKey is the counter from which fencing tokens are drawn. The hash tag
// keeps it in the same slot as the lock key on a Redis Cluster.
func fenceKey(key string) string { return "{" + key + "}:fence" }

// lockKey puts the lock in the same slot as its fence counter.
func lockKey(key string) string { return "{" + key + "}" }

func firstAddr(cfg impls.Config, name string) (string, error) {
	if len(cfg.Redis) == 0 {
		return "", fmt.Errorf("%s: no Redis address configured", name)
	}
	return cfg.Redis[0], nil
}

// never is a Lost channel for leases that cannot learn they were lost.
var never = make(chan struct{})
