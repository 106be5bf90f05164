package redislock

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// keyMaster is the client of the one server that masters key, for a lock
// that must send several commands on one connection to it (a WAIT counts
// the writes sent before it on its own connection only): on a Redis
// Cluster the master of key's slot as the cluster client's slot map names
// it (go-redis's MasterForKey, which reloads a map older than the reload
// interval), otherwise the client's own server (the master a Sentinel
// group names, asked at each dial).
func keyMaster(ctx context.Context, rdb redis.UniversalClient, key string) (*redis.Client, error) {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		m, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("the master of %s's slot: %w", key, err)
		}
		return m, nil
	case *redis.Client:
		return c, nil
	}
	return nil, fmt.Errorf("a %T gives no connection of its own to the master of %s", rdb, key)
}

// redirected turns a MOVED or ASK reply to a command sent past the
// cluster client (on keyMaster's connection) into a backend failure: the
// server refuses a command for a slot it no longer serves before running
// it (Redis checks the slot before the command), so nothing was written
// and nothing was granted. The cluster client would have reloaded its slot
// map on that reply; here it is asked to, so the lock's next attempt
// reaches the new master (a fail-over promoted its replica). The lock does
// not follow the redirect itself, as no Redis lock of the lab does on a
// cluster (redisclient: no redirect budget). Any other error is returned
// as it is, for try's classification (a cut connection: unknown).
func redirected(ctx context.Context, rdb redis.UniversalClient, name string, err error) error {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	if !moved && !ask {
		return err
	}
	if c, ok := rdb.(*redis.ClusterClient); ok {
		c.ReloadState(ctx)
	}
	return impls.Fail(name, "acquire", impls.ErrBackend,
		fmt.Errorf("the key's slot is served elsewhere, so the acquire script did not run: %w", err))
}
