//go:build mutants

package redislock

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls/mutant"
	"github.com/locklab/locklab/impls/redisclient"
)

// The scripts below are redis-setnx-px broken on purpose (each answers as
// acquireScript does: {1, token} or {0, pttl}), each live only
// under its mutant (package mutant): the matrix must catch every one.

// mutantNoExpiryScript grants with SET NX and no PX: the key never expires.
var mutantNoExpiryScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
`)

// mutantWithoutNXScript grants with SET PX and no NX: it overwrites a live
// holder's key.
var mutantWithoutNXScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, redis.call('INCR', KEYS[2])}
`)

// mutantFenceReusedScript grants as the correct script does but hands out
// token 1 every time instead of drawing the next one.
var mutantFenceReusedScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, 1}
end
return {0, redis.call('PTTL', KEYS[1])}
`)

// mutantDelScript releases with a plain DEL, whoever holds the key.
var mutantDelScript = redis.NewScript(`return redis.call('DEL', KEYS[1])`)

// mutantLuaNoExpiryScript is redis-lua-setnx-expire's script without its
// PEXPIRE: the lock of lesson 2's deadlock, in one script.
var mutantLuaNoExpiryScript = redis.NewScript(`
if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then
  return 1
end
return 0`)

// luaSetNXExpireAcquire is redis-lua-setnx-expire's acquire script, or its
// mutant's.
func luaSetNXExpireAcquire() *redis.Script {
	if mutant.On(mutant.LuaSetNXExpireNoExpiry) {
		return mutantLuaNoExpiryScript
	}
	return luaSetNXExpireScript
}

// setnxAcquireScript is redis-setnx-px's acquire script, or a mutant's.
func setnxAcquireScript() *redis.Script {
	switch {
	case mutant.On(mutant.SetNXPXNoExpiry):
		return mutantNoExpiryScript
	case mutant.On(mutant.SetNXPXGrantWithoutNX):
		return mutantWithoutNXScript
	case mutant.On(mutant.SetNXPXFenceReused):
		return mutantFenceReusedScript
	}
	return acquireScript
}

// setnxReleaseScript is redis-setnx-px's release script, or a mutant's.
func setnxReleaseScript() *redis.Script {
	if mutant.On(mutant.SetNXPXReleaseUnchecked) {
		return mutantDelScript
	}
	return redisclient.ReleaseScript
}

// waitShortfall is a WAIT lock's check of its WAIT (want replicas asked
// for, n answered), or a mutant's: shortfall-kept takes any outcome for a
// confirmation, a failed WAIT too; count-ignored still gives a failed
// WAIT's grant back, but takes any answer for a confirmation, however few
// replicas it counts.
func waitShortfall(want, n int64, err error) error {
	switch {
	case mutant.On(mutant.SetNXPXWaitShortfallKept):
		return nil
	case mutant.On(mutant.SetNXPXWaitCountIgnored) && err == nil:
		// A WAIT that answered is taken for a confirmation, whatever
		// number of replicas it says acknowledged the grant (0 too).
		return nil
	}
	return replicaShortfall(want, n, err)
}

// waitRoute is where redis-setnx-px-wait sends its WAIT: the connection
// that carried the grant, or, under its mutant, the client, as a reviewer
// who reads WAIT as a command like any other would write it. The client
// sends it on another connection of its pool: one whose last write (if
// any) the replicas acknowledged long ago, so the WAIT is answered at
// once by every replica still attached, whatever became of the grant; on
// a Redis Cluster, to a master picked at random (WAIT names no key), which
// counts its own replica.
func waitRoute(rdb redis.UniversalClient, conn *redis.Conn) commandSender {
	if mutant.On(mutant.SetNXPXWaitOtherConnection) {
		return rdb
	}
	return conn
}

// replicasToWaitFor is how many replicas redis-setnx-px-wait-all waits
// for: every one its master counts, or, under its mutant, one.
func replicasToWaitFor(ctx context.Context, conn *redis.Conn) (int64, error) {
	if mutant.On(mutant.SetNXPXWaitAllOneReplica) {
		return 1, nil
	}
	return connectedReplicas(ctx, conn)
}
