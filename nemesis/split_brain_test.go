package nemesis

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestSplitBrainApplies: explore draws split-brain-with-clients wherever a
// master its group can replace runs on the lab's hosts with three clients
// or more, and says why not elsewhere; container mode gives its own reason
// (no hosts), as every kind that cuts hosts does. No server starts.
func TestSplitBrainApplies(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		clients        int
		why            string // part of the reason it does not apply; "" means it applies
	}{
		{"redis-setnx-px", topology.RedisSentinelName, 4, ""},
		{"redis-setnx-px", topology.RedisSentinelMinReplicasName, 3, ""},
		{"redis-setnx-px", topology.RedisClusterName, 4, ""},
		{"redis-setnx-px", topology.RedisSentinelName, 2, "at least three clients"},
		{"redis-setnx-px", topology.SingleName, 4, "a master that the rest of its group can replace"},
		{"zookeeper", "zk-ensemble", 4, "a master that the rest of its group can replace"},
		{"local-mutex", topology.SingleName, 4, "share one process"},
	} {
		for _, backend := range []string{"local", "containers"} {
			t.Run(backend+"/"+tc.impl+"@"+tc.topology, func(t *testing.T) {
				t.Setenv("LOCKLAB_SERVERS", backend)
				spec, err := impls.Lookup(tc.impl)
				if err != nil {
					t.Fatal(err)
				}
				topo, err := TopologyFor(spec, tc.topology, tc.clients)
				if err != nil {
					t.Fatal(err)
				}
				why := tc.why
				if topo.NoHosts != "" {
					why = topo.NoHosts
				}
				ks, skipped, err := Applicable(spec, topo, []string{SplitBrainWithClients})
				if err != nil {
					t.Fatal(err)
				}
				applies := slices.ContainsFunc(ks, func(k Kind) bool { return k.Name() == SplitBrainWithClients })
				if why == "" && !applies {
					t.Fatalf("does not apply: %s", skipped[SplitBrainWithClients])
				}
				if why != "" && !strings.Contains(skipped[SplitBrainWithClients], why) {
					t.Errorf("skipped for %q, want a reason containing %q", skipped[SplitBrainWithClients], why)
				}
			})
		}
	}
}

// TestSplitClients: the old side is the holder's slot and the next ones,
// wrapping, half the clients and at least two, always leaving one; the
// engine makes its target a link from the holder, as for
// net-split-with-holder.
func TestSplitClients(t *testing.T) {
	for _, tc := range []struct {
		kind, target string
		clients      int
		want         []int
		ok           bool
	}{
		{SplitBrainWithClients, Link("client-0", "redis-1"), 4, []int{0, 1}, true},
		{SplitBrainWithClients, Link("client-3", "redis-1"), 4, []int{3, 0}, true},
		{SplitBrainWithClients, Link("client-2", "redis-1"), 3, []int{2, 0}, true},
		{SplitBrainWithClients, Link("client-4", "redis-1"), 8, []int{4, 5, 6, 7}, true},
		{SplitBrainWithClients, Link("client-0", "redis-1"), 2, nil, false},
		{SplitBrainWithClients, "redis-1", 4, nil, false},
		{NetSplitWithHolder, Link("client-0", "redis-1"), 4, nil, false},
	} {
		got, ok := SplitClients(tc.kind, tc.target, tc.clients)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("SplitClients(%s, %s, %d) = %v, %v; want %v, %v", tc.kind, tc.target, tc.clients, got, ok, tc.want, tc.ok)
		}
	}
	if !WithHolder(SplitBrainWithClients) || !WithHolder(NetSplitWithHolder) || WithHolder(NetIsolate) {
		t.Error("the engine must make a link from the holder for both splits with the holder, and for nothing else")
	}
}
