//go:build !mutants

package mysqllock

import "database/sql"

// Without the mutants build tag the MySQL locks run as written: these are
// mutants.go's switches with no mutant compiled in (see package mutant).

// getLockTimeout is the blocking acquire's GET_LOCK timeout.
func getLockTimeout(seconds float64) float64 { return seconds }

// getLockGranted: GET_LOCK answered 1.
func getLockGranted(got sql.NullInt64) bool { return got.Valid && got.Int64 == 1 }

// forUpdateWaitSQL is the blocking acquire's row lock, which waits.
func forUpdateWaitSQL() string { return waitRowSQL }

// skippedRowGrants is false: no row back is never a grant.
func skippedRowGrants() bool { return false }

// optimisticGrantSQL is mysql-optimistic's grant.
func optimisticGrantSQL() string { return optimisticGrant }
