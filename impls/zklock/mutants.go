package zklock

import (
	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/impls/mutant"
)

// isLowest says whether a node with predecessor pred holds the lock: when
// none is ahead of it, or at once under the not-lowest mutant (package
// mutant), which skips the check.
func isLowest(pred string) bool {
	return pred == "" || mutant.On(mutant.ZooKeeperNotLowest)
}

// tokenOf is a grant's fencing token: its node's creation zxid, or 1 under
// the token-reused mutant.
func tokenOf(stat *zk.Stat) uint64 {
	if mutant.On(mutant.ZooKeeperTokenReused) {
		return 1
	}
	return uint64(stat.Czxid)
}
