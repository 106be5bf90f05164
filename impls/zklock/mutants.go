//go:build mutants

package zklock

import (
	"github.com/locklab/locklab/impls/mutant"
)

// isLowest says whether a node with predecessor pred holds the lock: when
// none is ahead of it, or at once under the not-lowest mutant (package
// mutant), which skips the check.
func isLowest(pred string) bool {
	return pred == "" || mutant.On(mutant.ZooKeeperNotLowest)
}

// tokenOf is a grant's fencing token: its lock directory's creation zxid
// plus its node's sequence number (see lease.Token), or 1 under the
// token-reused mutant.
func tokenOf(dirCzxid, seq int64) uint64 {
	if mutant.On(mutant.ZooKeeperTokenReused) {
		return 1
	}
	return uint64(dirCzxid) + uint64(seq)
}

// lossUnreported is true under the mutant whose holder is never told its
// connection dropped or its session ended: Lost never closes.
func lossUnreported() bool { return mutant.On(mutant.ZooKeeperLostNeverReported) }

// grantOnWake says whether a waiter takes the lock on its predecessor's
// deletion without listing again: only under the grant-on-wake mutant, the
// shortcut that a waiter frozen in line turns into two holders.
func grantOnWake() bool { return mutant.On(mutant.ZooKeeperGrantOnWake) }
