package etcdlock_test

import (
	"os"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/etcdlock"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

// The suite on one etcd: every declared capability probed, the adversarial
// state and races, a stalled and a killed server. A 1s TTL is a 1s etcd
// lease (cluster/etcd.go starts etcd with raft timing that allows it).
func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"etcd-lock", conformance.Options{TTL: time.Second}},
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
