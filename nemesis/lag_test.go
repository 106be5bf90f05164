package nemesis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestLagNeedsAMasterWithReplicas: both lag kinds are drawn by explore
// wherever a master has replicas on the lab's hosts (a Sentinel group, a
// Redis Cluster), and say why not elsewhere; container mode gives its
// own reason (no hosts). No server starts.
func TestLagNeedsAMasterWithReplicas(t *testing.T) {
	const confirms = "confirms every grant with a replica"
	for _, tc := range []struct {
		impl, topology string
		kind           string // "" for both kinds
		why            string // part of the reason it does not apply; "" means it applies
	}{
		{"redis-setnx-px", topology.RedisSentinelName, "", ""},
		{"redis-setnx-px", topology.RedisSentinelMinReplicasName, "", ""},
		{"redis-setnx-px", topology.RedisClusterName, "", ""},
		{"redis-setnx-px", topology.SingleName, "", "no master with replicas"},
		{"zookeeper", "zk-ensemble", "", "no master with replicas"},
		{"local-mutex", topology.SingleName, "", "share one process"},
		// A WAIT lock grants nothing while every replica is held back for
		// the run: the step lag applies, the lag that starts before the
		// first grant does not.
		{"redis-setnx-px-wait", topology.RedisSentinelName, ReplicationLag, ""},
		{"redis-setnx-px-wait", topology.RedisSentinelName, LaggingMasterKill, confirms},
		{"redis-setnx-px-wait-all", topology.RedisSentinelMinReplicasName, LaggingMasterKill, confirms},
	} {
		for _, kind := range []string{ReplicationLag, LaggingMasterKill} {
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

// checkLagApplies checks one kind on one lock and topology: it applies where
// why is empty, else it is skipped for a reason containing why, or, for a
// kind that asks for hosts first, for the backend's own reason when the
// backend has no hosts.
func checkLagApplies(t *testing.T, kind, impl, named, why string, hostsFirst bool) {
	t.Helper()
	spec, err := impls.Lookup(impl)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := TopologyFor(spec, named, 4)
	if err != nil {
		t.Fatal(err)
	}
	if topo.NoHosts != "" && hostsFirst {
		why = topo.NoHosts
	}
	ks, skipped, err := Applicable(spec, topo, []string{kind})
	if err != nil {
		t.Fatal(err)
	}
	if why == "" {
		if len(ks) != 1 || ks[0].Name() != kind {
			t.Fatalf("%s does not apply: %s", kind, skipped[kind])
		}
		return
	}
	if !strings.Contains(skipped[kind], why) {
		t.Errorf("%s skipped for %q, want a reason containing %q", kind, skipped[kind], why)
	}
}

// TestGenerateDrawsTheLag: explore's generator draws both lag kinds on a
// Sentinel group, aimed at the master.
func TestGenerateDrawsTheLag(t *testing.T) {
	spec, err := impls.Lookup("redis-setnx-px")
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
	ks, _, err := Applicable(spec, topo, []string{ReplicationLag, LaggingMasterKill})
	if err != nil {
		t.Fatal(err)
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
	for _, kind := range []string{ReplicationLag, LaggingMasterKill} {
		if drawn[kind] == 0 {
			t.Errorf("%s never drawn in 20 seeds (drawn: %v)", kind, drawn)
		}
	}
	if !slices.ContainsFunc(ks, func(k Kind) bool { return k.Name() == LaggingMasterKill }) {
		t.Error("lagging-master-kill is not drawable")
	}
}

// TestLaggingPromotionNeedsAReplica: the database fail-over under lag
// applies where primary-promotion does (a declared replica the lab
// promotes) and the primary does not wait for that replica, and says why
// elsewhere.
func TestLaggingPromotionNeedsAReplica(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		why            string
	}{
		{"pg-advisory", topology.PGReplicaAsyncName, ""},
		{"mysql-lock-table", topology.MySQLReplicaAsyncName, ""},
		{"pg-advisory", topology.PGReplicaSyncName, "commits wait for its one replica"},
		{"mysql-get-lock", topology.MySQLReplicaSemisyncName, "commits wait for its one replica"},
		{"pg-advisory", topology.SingleName, "declares no replica"},
		{"redis-setnx-px", topology.RedisSentinelName, "servers have none the lab promotes"},
	} {
		for _, backend := range []string{"local", "containers"} {
			t.Run(backend+"/"+tc.impl+"@"+tc.topology, func(t *testing.T) {
				t.Setenv("LOCKLAB_SERVERS", backend)
				why := tc.why
				if backend == "containers" && why == "" {
					// Its address moves between the lab's hosts, which
					// container mode has not.
					why = "hosts"
				}
				checkLagApplies(t, LaggingPromotion, tc.impl, tc.topology, why, false)
			})
		}
	}
}
