package scenarios_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// make test's matrix runs the Sentinel topologies briefly: the WAIT lock
// without a fault and where its WAIT decides (the kill at its grant, and
// the split once a replica acknowledged it), redis-sentinel-min-replicas
// with one fault, and not every other cell of theirs.
func TestBriefSentinelCells(t *testing.T) {
	// sentinel-split-after-ack cuts the master off on the lab's hosts.
	scenarios.SkipUnlessCellsRunHere(t, true, topology.RedisSentinelName, "redis-sentinel-min-replicas")
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	var brief []string
	for _, c := range scenarios.Brief(cells) {
		brief = append(brief, c.Name())
	}
	tests := []struct {
		cell string
		want bool
	}{
		{"redis-setnx-px-wait@redis-sentinel/contention", true},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-kill-at-grant", true},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-kill-at-grant/fenced", false},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-split-at-grant", false},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-split-after-ack", true},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-split-after-ack/fenced", false},
		{"redis-setnx-px-wait@redis-sentinel-min-replicas/sentinel-split-after-ack", false},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-master-kill", false},
		{"redis-setnx-px-wait@redis-sentinel-min-replicas/contention", false},
		{"redis-setnx-px@redis-sentinel/master-kill-under-lag/fenced", true},
		// Split brain with clients on both sides: the first correct lock's,
		// unfenced (unsafe: two masters grant for seconds), one run of
		// about 14 s; on redis-sentinel-min-replicas its cells turn on a
		// race (races.md) and stay with make matrix.
		{"redis-fair@redis-sentinel/sentinel-split-brain", true},
		{"redis-fair@redis-sentinel-min-replicas/sentinel-split-brain", false},
		{"redis-setnx-px@redis-sentinel/master-kill-under-lag", false},
		{"redis-setnx-px@redis-cluster/master-kill-under-lag", false},
		{"pg-advisory@pg-replica-async/promotion-under-lag", false},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-acked-replica-lost", true},
		{"redis-setnx-px-wait@redis-sentinel/sentinel-acked-replica-lost/fenced", false},
		{"redis-setnx-px@redis-sentinel/sentinel-acked-replica-lost", false},
		{"redis-setnx-px-wait-all@redis-sentinel/sentinel-rejoining-replica-promoted", false},
		{"redis-setnx-px@redis-sentinel/sentinel-rejoining-replica-promoted", false},
	}
	for _, tt := range tests {
		if got := slices.Contains(brief, tt.cell); got != tt.want {
			t.Errorf("brief has %s: %v, want %v", tt.cell, got, tt.want)
		}
	}
	byScenario := map[string]int{}
	for _, name := range brief {
		if _, rest, ok := strings.Cut(name, "@redis-sentinel-min-replicas/"); ok {
			byScenario[rest]++
		}
	}
	if len(byScenario) != 1 || byScenario["sentinel-master-split"] != 1 {
		t.Errorf("brief cells on redis-sentinel-min-replicas by scenario: %v, want sentinel-master-split once", byScenario)
	}
	for _, name := range brief {
		if strings.Contains(name, "@redis-sentinel/") {
			t.Logf("brief: %s", name)
		}
	}
}

// make test runs the MySQL replica topologies with two cells between them:
// the first correct lock's promotion on the asynchronous one, and on the
// semi-synchronous one the lock table's, where the acknowledgement keeps
// the row; no contention cell and no other lock.
func TestBriefMySQLReplicaCells(t *testing.T) {
	// primary-failover moves the primary's address between the lab's hosts.
	scenarios.SkipUnlessCellsRunHere(t, true, topology.MySQLReplicaAsyncName, topology.MySQLReplicaSemisyncName)
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range scenarios.Brief(cells) {
		if strings.Contains(c.Name(), "@mysql-replica-") {
			got = append(got, c.Name())
		}
	}
	want := []string{
		"mysql-for-update@mysql-replica-async/primary-failover",
		"mysql-lock-table@mysql-replica-semisync/primary-failover",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("brief cells on the MySQL replica topologies: %v, want %v", got, want)
	}
}

// make test runs the ZooKeeper ensemble's leader isolation fenced only:
// unfenced, whether the holder's session is expired is a race that three
// runs miss too often (the expectation row says unsafe, and make matrix
// runs it).
func TestBriefEnsembleCells(t *testing.T) {
	// holder-server-cut and leader-isolated cut members off on the lab's hosts.
	scenarios.SkipUnlessCellsRunHere(t, true, topology.ZKEnsembleName)
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range scenarios.Brief(cells) {
		if strings.Contains(c.Name(), "@zk-ensemble/") {
			got = append(got, c.Name())
		}
	}
	want := []string{
		"zookeeper@zk-ensemble/holder-crash",
		"zookeeper@zk-ensemble/holder-server-cut",
		"zookeeper@zk-ensemble/leader-isolated/fenced",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("brief cells on zk-ensemble: %v, want %v", got, want)
	}
}

// make test runs holder-partition-long once, on the single topology, for
// the first correct lock of ours, unfenced: the 8 s cut costs its length
// in every cell (onceOnSingle), and the keep-alive and wait_timeout
// topologies' cells are make matrix's.
func TestBriefLongPartitionOnce(t *testing.T) {
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	var got, all []string
	for _, c := range cells {
		if c.Scenario == "holder-partition-long" {
			all = append(all, c.Name())
		}
	}
	for _, c := range scenarios.Brief(cells) {
		if c.Scenario == "holder-partition-long" {
			got = append(got, c.Name())
		}
	}
	if len(all) == 0 {
		t.Skip("no holder-partition-long cell applies here (it needs the lab's hosts)")
	}
	if want := []string{"etcd-lock/holder-partition-long"}; !slices.Equal(got, want) {
		t.Errorf("brief holder-partition-long cells: %v, want %v (of %d cells)", got, want, len(all))
	}
}
