//go:build !mutants

package etcdlock

import "go.etcd.io/etcd/api/v3/mvccpb"

// Without the mutants build tag the etcd lock runs as written: this is
// mutants.go's switch with no mutant compiled in (see package mutant).

// heads says whether our key, created at rev, is the head of the line the
// transaction read back (owner: the key with the oldest create revision).
func heads(owner []*mvccpb.KeyValue, rev int64) bool {
	return len(owner) > 0 && owner[0].CreateRevision == rev
}

// tokenOf is a grant's fencing token: its key's create revision.
func tokenOf(rev int64) uint64 { return uint64(rev) }
