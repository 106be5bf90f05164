//go:build !mutants

package redislock

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls/redisclient"
)

// Without the mutants build tag redis-setnx-px runs as written: these are
// mutants.go's switches with no mutant compiled in (see package mutant).

// setnxAcquireScript is redis-setnx-px's acquire script.
func setnxAcquireScript() *redis.Script { return acquireScript }

// luaSetNXExpireAcquire is redis-lua-setnx-expire's acquire script.
func luaSetNXExpireAcquire() *redis.Script { return luaSetNXExpireScript }

// setnxReleaseScript is redis-setnx-px's release script.
func setnxReleaseScript() *redis.Script { return redisclient.ReleaseScript }

// waitShortfall is redis-setnx-px-wait's check of its WAIT.
func waitShortfall(want, n int64, err error) error { return replicaShortfall(want, n, err) }

// waitRoute is where redis-setnx-px-wait sends its WAIT: on the connection
// that carried the grant.
func waitRoute(_ redis.UniversalClient, conn *redis.Conn) commandSender { return conn }

// replicasToWaitFor is how many replicas redis-setnx-px-wait-all waits
// for: every one its master counts.
func replicasToWaitFor(ctx context.Context, conn *redis.Conn) (int64, error) {
	return connectedReplicas(ctx, conn)
}
