// Package redisson is the Redisson-style reentrant Redis lock: a hash of
// owner to hold count, a watchdog that renews the lease while the holder
// lives, and waiters woken by pub/sub instead of polling.
package redisson
