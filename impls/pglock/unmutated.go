//go:build !mutants

package pglock

// Without the mutants build tag the PostgreSQL locks run as written: these
// are mutants.go's switches with no mutant compiled in (see package mutant).

// optimisticAcquireSQL is pg-optimistic's acquire.
func optimisticAcquireSQL() string { return optimisticAcquire }

// optimisticReleaseSQL is pg-optimistic's release.
func optimisticReleaseSQL() string { return optimisticRelease }

// releaseKeepsLock is false: a release always runs pg_advisory_unlock
// before the connection goes back to the pool.
func releaseKeepsLock() bool { return false }

// advisoryWaitSQL is pg-advisory's blocking acquire.
func advisoryWaitSQL() string { return advisoryWait }

// forUpdateWaitSQL is pg-for-update's blocking acquire, which waits.
func forUpdateWaitSQL() string { return waitRow }

// skippedRowGrants is false: no row back is never a grant.
func skippedRowGrants() bool { return false }
