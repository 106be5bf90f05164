package redislock_test

import (
	"os"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/redislock"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"redis-setnx-px", conformance.Options{KnownDefects: conformance.CounterResetLimitation}},
		// 004_84007c392b46b35c.txt's SETNX and EXPIRE in one script: correct,
		// without fencing tokens.
		{"redis-lua-setnx-expire", conformance.Options{}},
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
