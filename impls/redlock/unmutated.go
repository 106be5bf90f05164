//go:build !mutants

package redlock

import (
	"time"

	"github.com/locklab/locklab/quorum"
)

// Without the mutants build tag Redlock runs as written: these are
// mutants.go's switches with no mutant compiled in (see package mutant).

// quorumOf is how many of n nodes a grant needs: a majority.
func quorumOf(n int) int { return quorum.Majority(n) }

// grantValidity is what is left of the TTL after a grant that took from
// start to end, less the drift allowance.
func (l *Redlock) grantValidity(start, end time.Time) time.Duration {
	return l.ttl - end.Sub(start) - l.drift()
}
