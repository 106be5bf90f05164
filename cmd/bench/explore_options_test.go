package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExploreOptionsKeepTheTopology: a shard's recorded options name its
// topology, so shards of two topologies' tables never merge into one,
// and the merged table's command line names it, so a reader can rerun it.
func TestExploreOptionsKeepTheTopology(t *testing.T) {
	o := tableOptions{Impls: "all", Topology: "redis-cluster", Seed: 1, Seeds: 3, TTL: time.Second, Clients: 4,
		Duration: time.Minute, Replays: 3, ShrinkBudget: 2 * time.Minute, ReplayChecks: 1}
	data, err := json.Marshal(o.record())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"topology":"redis-cluster"`) {
		t.Errorf("recorded options %s do not name the topology", data)
	}
	var back exploreOptions
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, err := back.tableOptions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Topology != o.Topology {
		t.Errorf("read back topology %q, want %q", got.Topology, o.Topology)
	}
	if err := writeExploreTable(dir, got, nil, "c0ffee", time.Second); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), " -topology redis-cluster ") {
		t.Errorf("the table's command line does not name its topology:\n%s", readme)
	}
}
