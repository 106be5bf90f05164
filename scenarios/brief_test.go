package scenarios_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/scenarios"
)

// make test's matrix runs the Sentinel topologies briefly: the WAIT lock
// without a fault and where its WAIT decides, redis-sentinel-min-replicas
// with no fault and one, and not every other cell of theirs.
func TestBriefSentinelCells(t *testing.T) {
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
		{"redis-setnx-px-wait@redis-sentinel/sentinel-master-kill", false},
		{"redis-setnx-px-wait@redis-sentinel-min-replicas/contention", false},
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
	if len(byScenario) != 2 || byScenario["contention"] != 1 || byScenario["sentinel-master-split"] != 1 {
		t.Errorf("brief cells on redis-sentinel-min-replicas by scenario: %v, want contention and sentinel-master-split once each", byScenario)
	}
	for _, name := range brief {
		if strings.Contains(name, "@redis-sentinel/") {
			t.Logf("brief: %s", name)
		}
	}
}
