package redisclient

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterOptions are a lock's settings for go-redis's cluster client over
// the members at seeds, from a single client's options o:
//
//   - MaxRedirects -1: the cluster client retries a command that timed out
//     or whose connection broke, first on the same member and then on
//     another, within its redirect budget (ClusterClient.process), which
//     for a SET NX whose reply was lost would report "held" for a lock we
//     hold: the reason New turns retries off. With no budget a MOVED reply
//     (the slot moved: a fail-over) comes back as an error too, and the
//     client reloads its slot map at once (LazyReload), so the lock's own
//     next attempt reaches the new master.
//   - ClusterStateReloadInterval of the read timeout: a master killed or
//     cut off sends no MOVED, and the default interval (60 s) would keep a
//     client dialling it long past the liveness bound; a reload asks a
//     random member for CLUSTER SLOTS, which names the promoted replica once
//     the cluster has failed over.
func clusterOptions(seeds []string, o *redis.Options) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:                      seeds,
		Dialer:                     o.Dialer,
		MaxRedirects:               -1,
		MaxRetries:                 o.MaxRetries,
		DialerRetries:              o.DialerRetries,
		DialTimeout:                o.DialTimeout,
		ReadTimeout:                o.ReadTimeout,
		WriteTimeout:               o.WriteTimeout,
		PoolSize:                   o.PoolSize,
		ContextTimeoutEnabled:      o.ContextTimeoutEnabled,
		ClusterStateReloadInterval: max(o.ReadTimeout, 50*time.Millisecond),
	}
}
