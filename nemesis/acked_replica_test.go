package nemesis

import (
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestReplicaLostNeedsASentinelGroup: the two kinds that lose the replica
// which acknowledged apply on the Sentinel groups (a master with two
// replicas) and nowhere else, saying why; in container mode they say the
// backend's reason (no hosts of the lab's own to hold a stream on), as the
// lag kinds do. A lock that waits for every replica its master counts is
// refused by AckedReplicaLost's held-back replica and never grants, so
// that kind does not apply to it, for the matrix's scenario and explore's
// draw alike (a run would wait forever for a holder inside its section).
func TestReplicaLostNeedsASentinelGroup(t *testing.T) {
	const waitsForAll = "the lock waits for every replica its master counts"
	for _, tc := range []struct {
		impl, topology string
		kind           string // "" for both kinds
		why            string // part of the reason it does not apply; "" means it applies
	}{
		{"redis-setnx-px", topology.RedisSentinelName, "", ""},
		{"redis-setnx-px-wait-all", topology.RedisSentinelMinReplicasName, RejoiningReplicaPromoted, ""},
		{"redis-setnx-px-wait-all", topology.RedisSentinelMinReplicasName, AckedReplicaLost, waitsForAll},
		{"redis-setnx-px-wait-all", topology.RedisSentinelName, AckedReplicaLost, waitsForAll},
		{"redis-setnx-px", topology.RedisClusterName, "", "a Redis Cluster's master has one replica"},
		{"redis-setnx-px", topology.SingleName, "", "no master with replicas"},
		{"zookeeper", "zk-ensemble", "", "no master with replicas"},
	} {
		for _, kind := range []string{AckedReplicaLost, RejoiningReplicaPromoted} {
			if tc.kind != "" && tc.kind != kind {
				continue
			}
			for _, backend := range []string{"local", "containers"} {
				t.Run(backend+"/"+kind+"/"+tc.impl+"@"+tc.topology, func(t *testing.T) {
					t.Setenv("LOCKLAB_SERVERS", backend)
					checkLagApplies(t, kind, tc.impl, tc.topology, tc.why, true)
				})
			}
		}
	}
}

// TestGenerateDrawsTheReplicaLost: explore's generator draws both kinds
// on a Sentinel group, aimed at the master, and its schedules validate.
func TestGenerateDrawsTheReplicaLost(t *testing.T) {
	spec, err := impls.Lookup("redis-setnx-px-wait")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := TopologyFor(spec, topology.RedisSentinelName, 4)
	if err != nil {
		t.Fatal(err)
	}
	if topo.NoHosts != "" {
		t.Skip(topo.NoHosts)
	}
	kinds := []string{AckedReplicaLost, RejoiningReplicaPromoted}
	ks, skipped, err := Applicable(spec, topo, kinds)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != len(kinds) {
		t.Fatalf("drawable: %v; skipped: %v", ks, skipped)
	}
	drawn := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		s := Generate(Plan{Seed: seed, Impl: spec.Name, TTL: time.Second, Bound: testBound, Clients: 4,
			Duration: time.Minute, Topology: topo, Kinds: ks})
		s.Topology = topology.RedisSentinelName
		if err := s.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, st := range s.Faults {
			if st.Target != MasterTarget {
				t.Errorf("seed %d: %s aimed at %q, not the master", seed, st.Kind, st.Target)
			}
			drawn[st.Kind]++
		}
	}
	for _, kind := range kinds {
		if drawn[kind] == 0 {
			t.Errorf("%s never drawn in 20 seeds (drawn: %v)", kind, drawn)
		}
	}
}
