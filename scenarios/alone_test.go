package scenarios_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
)

// The matrix runs every cell once, the ones that run alone after all the
// ones that share the machine, each group in the list's order.
func TestAloneLast(t *testing.T) {
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	order := scenarios.AloneLast(cells)
	if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, indices(len(cells))) {
		t.Fatalf("not every cell once: %d positions for %d cells", len(order), len(cells))
	}
	firstAlone := slices.IndexFunc(order, func(i int) bool { return scenarios.RunsAlone(cells[i]) })
	if firstAlone < 0 {
		t.Fatal("no cell runs alone: the test shows nothing")
	}
	for k, i := range order {
		if alone := scenarios.RunsAlone(cells[i]); alone != (k >= firstAlone) {
			t.Fatalf("%s (alone %v) at %d, the first alone cell at %d", cells[i].Name(), alone, k, firstAlone)
		}
		if k > 0 && k != firstAlone && order[k-1] > i {
			t.Fatalf("%s out of the list's order", cells[i].Name())
		}
	}
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// The scenarios whose holder must act within its lease right after the
// lab's own fault run alone; a client fault that lasts past the lease
// does not need to.
func TestScenariosThatRunAlone(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		alone    bool
	}{
		{"holder-session-ended", true},
		{"server-restart", true},
		{"queued-waiter-pause", true},
		{"pause-past-ttl", false},
		{"late-release", false},
		{"primary-failover", true},
		{"sentinel-kill-at-grant", false},
	} {
		s, err := scenarios.Lookup(tt.scenario)
		if err != nil {
			t.Fatal(err)
		}
		if (s.Alone != "") != tt.alone {
			t.Errorf("%s: Alone %q, want alone %v", tt.scenario, s.Alone, tt.alone)
		}
	}
}

// A topology's cells share the machine unless the topology says why they
// cannot (an ensemble whose start or elections take both cores); a
// scenario that runs alone does so on every topology.
func TestTopologiesThatRunAlone(t *testing.T) {
	for _, tt := range []struct {
		topology, scenario string
		alone              bool
	}{
		{"single", "holder-crash", false},
		{"zk-ensemble", "holder-crash", true},
		{"etcd-cluster", "holder-crash", true},
		{"redis-sentinel", "holder-crash", false},
		{"redis-cluster", "holder-crash", false},
		{"pg-replica-sync", "holder-crash", false},
		{"pg-idle-timeouts", "pause-past-ttl", true},
		{"mysql-wait-timeout", "slow-work-past-ttl", true},
		{"single", "server-restart", true},
		{"redis-sentinel", "server-restart", true},
	} {
		c := scenarios.Cell{Topology: tt.topology, Scenario: tt.scenario}
		if got := scenarios.RunsAlone(c); got != tt.alone {
			t.Errorf("%s on %s: alone %v, want %v", tt.scenario, tt.topology, got, tt.alone)
		}
		// The reason names what makes the cell run alone: the scenario
		// when it does on every topology, else the topology.
		why := scenarios.AloneBecause(c)
		if tt.alone && !strings.HasPrefix(why, tt.scenario+": ") && !strings.HasPrefix(why, tt.topology+": ") {
			t.Errorf("%s on %s: alone because %q, which names neither", tt.scenario, tt.topology, why)
		}
	}
}
