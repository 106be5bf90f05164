//go:build mutants

package redlock

import (
	"time"

	"github.com/locklab/locklab/impls/mutant"
	"github.com/locklab/locklab/quorum"
)

// quorumOf is how many of n nodes a grant needs: a majority, or one node
// under the minority-grant mutant (package mutant).
func quorumOf(n int) int {
	if mutant.On(mutant.RedlockMinorityGrant) {
		return 1
	}
	return quorum.Majority(n)
}

// grantValidity is what is left of the TTL after a grant that took from
// start to end, less the drift allowance. Under the no-validity-check
// mutant it is a day, whatever the grant took: the lease claims time the
// keys do not have, and the client works past their expiry.
func (l *Redlock) grantValidity(start, end time.Time) time.Duration {
	if mutant.On(mutant.RedlockNoValidityCheck) {
		return 24 * time.Hour
	}
	return l.ttl - end.Sub(start) - l.drift()
}
