//go:build mutants

package mysqllock

import (
	"database/sql"

	"github.com/locklab/locklab/impls/mutant"
)

// Our MySQL locks broken on purpose, each live only under its mutant
// (package mutant): the matrix must catch every one. Each is the correct
// code with one change, named in its comment.

// getLockTimeout is the blocking acquire's GET_LOCK timeout; under its
// mutant, zero: the acquire no longer waits.
func getLockTimeout(seconds float64) float64 {
	if mutant.On(mutant.MySQLGetLockIgnoreResult) {
		return 0
	}
	return seconds
}

// getLockGranted reads GET_LOCK's answer; under its mutant any non-NULL
// answer is a grant, 0 (held by another session) too.
func getLockGranted(got sql.NullInt64) bool {
	if mutant.On(mutant.MySQLGetLockIgnoreResult) {
		return got.Valid
	}
	return got.Valid && got.Int64 == 1
}

// forUpdateWaitSQL is the blocking acquire's row lock; under its mutant,
// SKIP LOCKED, which does not wait and answers no row when the row is held.
func forUpdateWaitSQL() string {
	if mutant.On(mutant.MySQLForUpdateSkipLocked) {
		return tryRowSQL
	}
	return waitRowSQL
}

// skippedRowGrants: under the SKIP LOCKED mutant, no row back is taken for
// a grant.
func skippedRowGrants() bool { return mutant.On(mutant.MySQLForUpdateSkipLocked) }

// mutantOptimisticNoCompare is the grant with its WHERE cut to the key.
const mutantOptimisticNoCompare = `UPDATE locklab_optimistic_lock
SET owner = ?, version = LAST_INSERT_ID(version + 1), expires_at = NOW(6) + INTERVAL ? MICROSECOND
WHERE lock_key = ?`

// mutantOptimisticVersionReused is the grant keeping the row's version
// instead of bumping it: every grant of a key hands out the same token.
const mutantOptimisticVersionReused = `UPDATE locklab_optimistic_lock
SET owner = ?, version = LAST_INSERT_ID(version), expires_at = NOW(6) + INTERVAL ? MICROSECOND
WHERE lock_key = ? AND (owner IS NULL OR expires_at <= NOW(6))`

// optimisticGrantSQL is mysql-optimistic's grant, or a mutant's.
func optimisticGrantSQL() string {
	switch {
	case mutant.On(mutant.MySQLOptimisticNoCompare):
		return mutantOptimisticNoCompare
	case mutant.On(mutant.MySQLOptimisticVersionReused):
		return mutantOptimisticVersionReused
	}
	return optimisticGrant
}
