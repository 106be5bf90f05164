package nemesis

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestHolderServerNeedsOneServerSession: a fault can be aimed at the
// holder's own server only where a client keeps its session on one server
// of the ensemble (ZooKeeper), not where it talks to every member at once
// (etcd), whose holder has no one server to name: there a drawn step would
// end the run at "connected to 3 lock servers, not one".
func TestHolderServerNeedsOneServerSession(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		want           bool
	}{
		{"zookeeper", topology.ZKEnsembleName, true},
		{"etcd-lock", topology.EtcdClusterName, false},
		{"peer-etcd-mutex", topology.EtcdClusterName, false},
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
			for _, name := range []string{NetIsolate, NetPartitionClient, ServerPause} {
				k, err := Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				if got := slices.Contains(k.Targets(topo), HolderServerTarget); got != tc.want {
					t.Errorf("%s targets the holder's server: %v, want %v (targets %v)", name, got, tc.want, k.Targets(topo))
				}
			}
		})
	}
}
