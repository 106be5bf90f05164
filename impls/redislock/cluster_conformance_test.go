package redislock_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/topology"
)

// clusterBrief is make test's share of the suite on the Redis Cluster: a
// grant and a refusal, a double release, the keys the lock leaves read back
// on the key's slot master, and planted or garbled keys there (a few
// seconds on one cluster). The rest repeats on a cluster what the single
// topology's run proves of the same lock; naming the test (-run
// 'TestConformanceOnRedisCluster') or LOCKLAB_MATRIX_ALL=1 runs it all.
var clusterBrief = []string{
	"TryAcquireReturnsHeldAtOnce", "ReleaseTwiceIsNotHeld", "ServerSideShape", "AdversarialRedis",
}

// The suite on a Redis Cluster (three masters, a replica each), through
// the cluster client, for the two locks whose cells the matrix runs there
// with a mitigation beside them: the plain SET NX PX lock and the one that
// waits for the key's own master's replica. The suite's own reads and
// writes go to the key's slot master (conformance's server view).
//
// The whole suite (named, or LOCKLAB_MATRIX_ALL) leaves out two checks
// that cannot judge a cluster client: CapabilityNoPolling counts the
// requests through the suite's relays to the addresses the lock is given,
// and a cluster client sends its requests to the addresses the slot map
// names; and the WAIT lock's first request against a stalled cluster is a
// read (the slot map, MasterForKey), so it knows it sent no acquire script
// and says backend failure where the check expects an unknown outcome
// (SkipPausedServer, as for other clients that read first).
func TestConformanceOnRedisCluster(t *testing.T) {
	opts := conformance.Options{KnownDefects: conformance.CounterResetLimitation, Leave: []string{"CapabilityNoPolling"}}
	whole := wholeSuiteAsked("TestConformanceOnRedisCluster")
	// The brief run shares one cluster between the two locks (the plain
	// lock needs no replica, and the cluster has one for every master
	// either way). The whole suite ends by killing and restarting every
	// server, which leaves a Redis Cluster down (CLUSTERDOWN: its members
	// come back with no data), so there each lock gets a cluster of its own.
	var shared *cluster.Topology
	if !whole {
		opts.Only = clusterBrief
		wait, err := impls.Lookup("redis-setnx-px-wait")
		if err != nil {
			t.Fatal(err)
		}
		shared = conformance.TopologyOn(t, wait, topology.RedisClusterName)
	}
	for _, name := range []string{"redis-setnx-px", "redis-setnx-px-wait"} {
		t.Run(name, func(t *testing.T) {
			spec, err := impls.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			opts := opts
			opts.SkipPausedServer = name == "redis-setnx-px-wait"
			topo := shared
			if whole {
				topo = conformance.TopologyOn(t, spec, topology.RedisClusterName)
			}
			conformance.Run(t, spec, topo, opts)
		})
	}
}

// wholeSuiteAsked reports whether this run asked for the whole suite: by
// naming test in -run, or with every long suite (LOCKLAB_MATRIX_ALL).
func wholeSuiteAsked(test string) bool {
	if os.Getenv("LOCKLAB_MATRIX_ALL") != "" {
		return true
	}
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), test)
}
