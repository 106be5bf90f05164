//go:build !mutants

package redisson

import "github.com/redis/go-redis/v9"

// Without the mutants build tag the reentrant lock runs as written: these
// are mutants.go's switches with no mutant compiled in (see package mutant).

// acquireScriptNow is the acquire script.
func acquireScriptNow() *redis.Script { return acquireScript }

// renewScriptNow is the renewal script.
func renewScriptNow() *redis.Script { return renewScript }

// releaseScriptNow is the release script.
func releaseScriptNow() *redis.Script { return releaseScript }

// knowsItLost is the release's shortcut for a hold it already knows is
// lost.
func knowsItLost(h *hold) bool { return h.isLost() }

// watchdogOff is false: the watchdog always renews.
func watchdogOff() bool { return false }
