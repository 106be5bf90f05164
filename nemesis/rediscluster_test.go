package nemesis

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestSplitWithHolderAimsAtAMaster: the split of the master with the
// holder applies where the servers have a master (a Sentinel group, a
// Redis Cluster, whose master is the lock key's slot master), and not on
// a quorum, which has a leader and no master: explore must not draw it
// there (it did on etcd, and the run died finding no master).
func TestSplitWithHolderAimsAtAMaster(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		applies        bool
	}{
		{"redis-setnx-px", topology.RedisSentinelName, true},
		{"redis-setnx-px", topology.RedisClusterName, true},
		{"etcd-lock", "etcd-cluster", false},
		{"zookeeper", "zk-ensemble", false},
	} {
		t.Run(tc.impl+"@"+tc.topology, func(t *testing.T) {
			spec, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := TopologyFor(spec, tc.topology, 4)
			if err != nil {
				t.Fatal(err)
			}
			if topo.NoHosts != "" {
				t.Skip(topo.NoHosts)
			}
			ks, skipped, _ := Applicable(spec, topo, nil)
			applies := slices.ContainsFunc(ks, func(k Kind) bool { return k.Name() == NetSplitWithHolder })
			if applies != tc.applies {
				t.Errorf("%s applies %v, want %v (skipped: %q)", NetSplitWithHolder, applies, tc.applies, skipped[NetSplitWithHolder])
			}
			if got := slices.Contains(serverTargets(topo), MasterTarget); got != tc.applies {
				t.Errorf("server targets include %s: %v, want %v", MasterTarget, got, tc.applies)
			}
		})
	}
}
