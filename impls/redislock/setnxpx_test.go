package redislock_test

import (
	"context"
	"os"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	_ "github.com/locklab/locklab/impls/redislock"
	"github.com/locklab/locklab/topology"
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
	// Side by side, two at a time (sideBySide); they start once the
	// replica suites below, which run alone, have ended.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conformance.SideBySide(t)
			spec, err := impls.Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), tt.opts)
		})
	}
	// The lock that waits for a replica has none on the single topology:
	// it meets the suites on one Redis with a replica, its clients given
	// the master's address (on a Sentinel group they would be given the
	// sentinels', and the capability probes, which relink the lock's
	// connections to the addresses it was given, never reach the master:
	// NoPolling saw no request at all).
	// The lock that waits for every replica meets them so too: with one
	// replica, it waits for that one.
	for _, name := range []string{"redis-setnx-px-wait", "redis-setnx-px-wait-all"} {
		// Each runs alone: its grants wait for a replica's acknowledgement
		// within 125 ms, which a loaded machine has been seen to miss.
		t.Run(name, func(t *testing.T) {
			spec, err := impls.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := cluster.Start(context.Background(), topology.Of(topology.RedisNodes(1), topology.ReplicaOf("redis-1")), cluster.External{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(topo.Close)
			waitReplicasAcknowledge(t, topo.Node("redis-1").Addr, 1)
			conformance.Run(t, spec, topo, conformance.Options{KnownDefects: conformance.CounterResetLimitation})
		})
	}
}
