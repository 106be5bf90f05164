// Package quorum is the one place the lab says how many of n nodes make a
// majority: the count a lock over independent nodes (Redlock, redsync) must
// win to grant, that a partition must leave reachable for grants to go on,
// and that a ZooKeeper or etcd ensemble needs to serve. It imports nothing,
// so that any package (cluster, nemesis, the locks, the benchmark) can use
// it without depending on the others.
package quorum

// Majority is the smallest number of n nodes that is more than half of
// them: n/2 + 1. Two majorities of the same n always share a node, which
// is why a grant won on one excludes a grant on another. Majority(0) is 1:
// no set of zero nodes can reach it.
func Majority(n int) int { return n/2 + 1 }
