// Package redisson is the Redisson-style reentrant Redis lock: a hash of
// owner to hold count, a watchdog that renews the lease while the holder
// lives, and waiters that block until a release wakes one of them
// (wake.go) instead of polling.
package redisson
