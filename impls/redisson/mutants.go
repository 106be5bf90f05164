//go:build mutants

package redisson

import (
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls/mutant"
)

// The scripts below are the reentrant lock broken on purpose, each live
// only under its mutant (package mutant): the matrix must catch every one.
// Each is the correct script with one change, named in its comment.

// mutantGrantWhenHeldScript: no check that the hash is free or ours; it adds
// our owner field beside a live holder's.
var mutantGrantWhenHeldScript = redis.NewScript(`
local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
if count == 1 then
  redis.call('del', KEYS[3])
end
local token = 0
if ARGV[3] == '1' then
  if count == 1 then
    token = redis.call('incr', KEYS[2])
    redis.call('hset', KEYS[1], '` + fenceField + `', token)
  else
    token = tonumber(redis.call('hget', KEYS[1], '` + fenceField + `')) or 0
  end
end
return {count, token}
`)

// mutantTokenReusedScript: a first grant gets token 1 instead of the next
// INCR.
var mutantTokenReusedScript = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if count == 1 then
    redis.call('del', KEYS[3])
  end
  local token = 0
  if ARGV[3] == '1' then
    token = 1
    redis.call('hset', KEYS[1], '` + fenceField + `', token)
  end
  return {count, token}
end
return {0, redis.call('pttl', KEYS[1])}
`)

// mutantReleaseUncheckedScript: no check that our owner field is in the
// hash; a release that finds it missing deletes the hash anyway.
var mutantReleaseUncheckedScript = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 and redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
redis.call('del', KEYS[1])
redis.call('rpush', KEYS[2], '1')
redis.call('pexpire', KEYS[2], ARGV[1])
return 1
`)

// mutantRenewUncheckedScript: the renewal is a plain PEXPIRE, as a
// hand-written watchdog often is, with no check that our owner field is
// still in the hash: it extends whoever holds the lock now, and answers
// "renewed" even when the lock is gone, so the holder never learns it lost
// it.
var mutantRenewUncheckedScript = redis.NewScript(`
redis.call('pexpire', KEYS[1], ARGV[1])
return 1
`)

// renewScriptNow is the renewal script, or the mutant's.
func renewScriptNow() *redis.Script {
	if mutant.On(mutant.ReentrantRenewUnchecked) {
		return mutantRenewUncheckedScript
	}
	return renewScript
}

// acquireScriptNow is the acquire script, or a mutant's.
func acquireScriptNow() *redis.Script {
	switch {
	case mutant.On(mutant.ReentrantGrantWhenHeld):
		return mutantGrantWhenHeldScript
	case mutant.On(mutant.ReentrantFencedTokenReused):
		return mutantTokenReusedScript
	}
	return acquireScript
}

// releaseScriptNow is the release script, or a mutant's.
func releaseScriptNow() *redis.Script {
	if mutant.On(mutant.ReentrantReleaseUnchecked) {
		return mutantReleaseUncheckedScript
	}
	return releaseScript
}

// knowsItLost is the release's shortcut for a hold it already knows is
// lost; the unchecked-release mutant goes to the server regardless.
func knowsItLost(h *hold) bool {
	return h.isLost() && !mutant.On(mutant.ReentrantReleaseUnchecked)
}

// watchdogOff is true under the mutant that never renews.
func watchdogOff() bool { return mutant.On(mutant.ReentrantNoWatchdog) }
