//go:build mutants

package pglock

import "github.com/locklab/locklab/impls/mutant"

// The statements below are our PostgreSQL locks broken on purpose, each
// live only under its mutant (package mutant): the matrix must catch every
// one. Each is the correct statement with one change, named in its comment.

// mutantOptimisticNoCompare: the upsert has no WHERE, so it takes the row
// whoever holds it.
const mutantOptimisticNoCompare = `INSERT INTO locklab_optimistic_lock AS l (key, owner, version, expires_at)
VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE
	SET owner = EXCLUDED.owner, version = l.version + 1, expires_at = EXCLUDED.expires_at
RETURNING version`

// mutantOptimisticVersionReused: a grant keeps the row's version, so every
// grant of a key gets token 1.
const mutantOptimisticVersionReused = `INSERT INTO locklab_optimistic_lock AS l (key, owner, version, expires_at)
VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE
	SET owner = EXCLUDED.owner, version = l.version, expires_at = EXCLUDED.expires_at
	WHERE l.owner IS NULL OR l.expires_at <= now()
RETURNING version`

// mutantOptimisticReleaseAny frees the row without comparing owner ($2) and
// version ($3): they are bound only because the caller sends them.
const mutantOptimisticReleaseAny = `UPDATE locklab_optimistic_lock
SET owner = NULL, expires_at = '-infinity'
WHERE key = $1 AND $2::text IS NOT NULL AND $3::bigint IS NOT NULL`

// optimisticAcquireSQL is pg-optimistic's acquire, or a mutant's.
func optimisticAcquireSQL() string {
	switch {
	case mutant.On(mutant.PGOptimisticNoCompare):
		return mutantOptimisticNoCompare
	case mutant.On(mutant.PGOptimisticVersionReused):
		return mutantOptimisticVersionReused
	}
	return optimisticAcquire
}

// optimisticReleaseSQL is pg-optimistic's release, or a mutant's.
func optimisticReleaseSQL() string {
	if mutant.On(mutant.PGOptimisticReleaseAny) {
		return mutantOptimisticReleaseAny
	}
	return optimisticRelease
}

// releaseKeepsLock is true under the mutant whose release hands the
// lease's connection back to the pool without pg_advisory_unlock: the
// session lock survives the release, held by an idle pooled connection, and
// only this client's next acquire (reentrant on that session) gets it.
func releaseKeepsLock() bool { return mutant.On(mutant.PGAdvisoryReleaseKeepsLock) }

// advisoryWaitSQL is pg-advisory's blocking acquire, or under its mutant
// pg_try_advisory_lock, whose false (held by another session) the caller's
// Exec ignores: the lease is granted whatever the server said.
func advisoryWaitSQL() string {
	if mutant.On(mutant.PGAdvisoryIgnoreTryResult) {
		return advisoryTry
	}
	return advisoryWait
}

// forUpdateWaitSQL is pg-for-update's blocking acquire; under its mutant,
// SKIP LOCKED, which does not wait and answers no row when the row is held.
func forUpdateWaitSQL() string {
	if mutant.On(mutant.PGForUpdateSkipLocked) {
		return tryRow
	}
	return waitRow
}

// skippedRowGrants: under the SKIP LOCKED mutant, no row back is taken for
// a grant.
func skippedRowGrants() bool { return mutant.On(mutant.PGForUpdateSkipLocked) }
