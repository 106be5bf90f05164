package peers_test

import (
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
)

// etcd's own concurrency.Mutex through the adapter, on one etcd.
func TestEtcdMutexConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"peer-etcd-mutex", conformance.Options{TTL: time.Second, KnownDefects: map[string]string{
			// NewMutex(s, pfx) keys the lock by a prefix (pfx + "/") and
			// reads its holder as the oldest key in that range, so a lock
			// named "x/a/b" puts its key inside "x"'s range: while it is
			// held, "x" reads as held too. A user who passes names with
			// slashes gets locks that block each other.
			conformance.DefectKeysCollide: `the lock is a key prefix: "x/a/b"'s keys lie inside "x"'s range, so "x" reads as held`,
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := impls.Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), tt.opts)
		})
	}
}
