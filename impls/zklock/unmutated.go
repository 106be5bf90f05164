//go:build !mutants

package zklock

// Without the mutants build tag the ZooKeeper lock runs as written: these
// are mutants.go's switches with no mutant compiled in (see package mutant).

// isLowest says whether a node with predecessor pred holds the lock: when
// none is ahead of it.
func isLowest(pred string) bool { return pred == "" }

// tokenOf is a grant's fencing token: its lock directory's creation zxid
// plus its node's sequence number (see lease.Token).
func tokenOf(dirCzxid, seq int64) uint64 { return uint64(dirCzxid) + uint64(seq) }

// lossUnreported is false: a dropped connection or an ended session closes
// the holder's Lost.
func lossUnreported() bool { return false }

// grantOnWake is false: a waiter woken by its predecessor's deletion lists
// the line again on its session before it takes the lock.
func grantOnWake() bool { return false }
