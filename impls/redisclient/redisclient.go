// Package redisclient is the Redis client every Redis lock family of the
// lab shares (redislock, redisson, redis-fair, Redlock, and the peers'
// adapters, so that what differs between a peer and ours is the library,
// not the client): the go-redis settings a lock needs, and the
// owner-checked release and refresh scripts that a single-node lock and
// each of Redlock's nodes run alike. It is a client, not a lock: lock
// families depend on it instead of on one another.
package redisclient

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/topology"
)

// New returns a go-redis client tuned for locking: no automatic retries (a
// retried SET NX whose first reply was lost would report "held" for a lock
// we hold), and timeouts well under the TTL, so that a stalled server
// turns into an error before the lease runs out.
func New(addr string, ttl time.Duration) *redis.Client {
	return redis.NewClient(Options(addr, ttl))
}

// Open returns New's client for the Redis of ep, with tune (if non-nil)
// applied to New's options first: the server at ep's first address or,
// when ep is reached via Sentinel, whichever server the sentinels name as
// the master of ep.Master (go-redis's failover client asks them at each
// dial and follows a switch-master), or, when ep is a Redis Cluster's
// members, go-redis's cluster client, which sends each command to the
// master of its key's slot; so that a lock runs unchanged on a single
// server, a Sentinel group and a cluster. A lock over one server takes
// its client from here; only a lock over several independent nodes
// (Redlock) reads the addresses itself. On a cluster a script's keys must
// share a slot (a hash tag), or Redis refuses it with CROSSSLOT.
func Open(ep topology.Endpoint, ttl time.Duration, tune func(*redis.Options)) (redis.UniversalClient, error) {
	if len(ep.Addrs) == 0 {
		return nil, errors.New("no Redis address configured")
	}
	o := Options(ep.Addrs[0], ttl)
	if tune != nil {
		tune(o)
	}
	switch ep.Via {
	case "":
		return redis.NewClient(o), nil
	case "sentinel":
		if ep.Master == "" {
			return nil, errors.New("a Sentinel endpoint names no master group")
		}
		// The same tuning for the data connections; the sentinels are asked
		// with the same timeouts, so a cut-off sentinel is skipped soon.
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:            ep.Master,
			SentinelAddrs:         ep.Addrs,
			Dialer:                o.Dialer,
			MaxRetries:            o.MaxRetries,
			DialerRetries:         o.DialerRetries,
			DialTimeout:           o.DialTimeout,
			ReadTimeout:           o.ReadTimeout,
			WriteTimeout:          o.WriteTimeout,
			PoolSize:              o.PoolSize,
			ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		}), nil
	case "cluster":
		return redis.NewClusterClient(clusterOptions(ep.Addrs, o)), nil
	default:
		return nil, fmt.Errorf("redisclient: endpoint via %q is not supported by a single-server lock", ep.Via)
	}
}

// Options are New's settings, for a client that must differ in a timeout
// or its pool (a connection that blocks in BLPOP, a Redlock node's small
// budget) and in nothing else.
func Options(addr string, ttl time.Duration) *redis.Options {
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
		// The pool's size is also go-redis's dial circuit breaker: after
		// PoolSize refused dials in a row a client stops dialling and
		// probes the server once a second, whatever the timeouts. At 4, a
		// lock client retrying every 10 ms tripped it within 40 ms of a
		// server's SIGKILL, and a server back 30 ms later stayed out of
		// reach for a second: as long as the lab's whole lease, so
		// server-restart came out safe only because nobody could reach
		// the emptied server before the holder's lease ran out. 32 refused
		// dials is a third of a second of an outage, which the breaker
		// then meets as meant. Connections are still dialled on demand.
		PoolSize: 32,
		// A lock client must see a cut connection as an error, not hide it.
		ContextTimeoutEnabled: true,
	}
}

// ReleaseScript deletes KEYS[1] only if it still holds our token ARGV[1]:
// a late release never frees a lock another client has since taken. Redlock
// runs the same script on each of its nodes.
var ReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// RefreshScript sets KEYS[1]'s expiry to ARGV[2] ms only if it still holds
// our token ARGV[1]. An expired lock has no value, so a refresh can never
// revive it.
var RefreshScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)
