//go:build mutants

package etcdlock

import (
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/locklab/locklab/impls/mutant"
)

// heads says whether our key, created at rev, is the head of the line the
// transaction read back, or at once under the not-head mutant (package
// mutant), which skips the check: every contender whose key was made holds.
func heads(owner []*mvccpb.KeyValue, rev int64) bool {
	if mutant.On(mutant.EtcdNotHead) {
		return true
	}
	return len(owner) > 0 && owner[0].CreateRevision == rev
}

// tokenOf is a grant's fencing token: its key's create revision, or 1
// under the token-reused mutant, which hands every holder the same token.
func tokenOf(rev int64) uint64 {
	if mutant.On(mutant.EtcdTokenReused) {
		return 1
	}
	return uint64(rev)
}
