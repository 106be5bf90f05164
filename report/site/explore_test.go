package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// TestExploreRowShowsWhatTheTableSays: an explore row on the site says what
// its markdown table says: how many drawn faults were not struck, and a
// link to each replay's own history when the counterexample did not
// replay, so a reader can see what the replay did instead, and which
// seeds found the lock stuck before one found it unsafe.
func TestExploreRowShowsWhatTheTableSays(t *testing.T) {
	row := record.ExploreRow{Impl: "redis-setnx-px", Verdict: checker.Unsafe, Faults: 8, NotStruck: 2,
		Injected: map[string]int{"client-pause": 5, "server-pause": 1}, StuckSeeds: []int64{1},
		Schedule: "redis-setnx-px-seed1.schedule.json", MinimalFaults: 1, MinimalDuration: "7s",
		Replays: []checker.Verdict{checker.Safe}, ReplayHistories: []string{"redis-setnx-px-seed1.replay-1.history.jsonl.gz"}}
	dir := t.TempDir()
	r := &Results{Dir: dir, Explore: &record.ExploreTable{Seed: 1, Rows: []record.ExploreRow{row}}}
	out := filepath.Join(dir, "site")
	if _, err := Write(out, r, Options{Out: out, Repo: dir, MatrixTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), `id="explore"`)
	for _, want := range []string{
		"<td>client-pause 5, server-pause 1; 2 not struck",
		"(did not reproduce)",
		`<span class="note">(stuck first, at seed 1)</span>`,
		`redis-setnx-px-seed1.replay-1.history.jsonl.gz">replay 1's history</a>`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the explore table does not say %q:\n%s", want, table)
		}
	}
}

// A fenced table's row says so on the site, where it stands beside the
// unfenced row of the same lock and topology.
func TestExploreRowSaysFenced(t *testing.T) {
	rows := []record.ExploreRow{
		{Impl: "zookeeper", Topology: "zk-ensemble", Verdict: checker.Unsafe},
		{Impl: "zookeeper", Topology: "zk-ensemble", Fenced: true, Verdict: checker.Safe},
		{Impl: "zookeeper", Topology: "zk-ensemble", Fenced: true, Without: []string{"server-clock-jump"}, Verdict: checker.Safe},
	}
	v := buildExplore(&record.ExploreTable{Seed: 1, Rows: rows}, links{}, "", "")
	var got []string
	for _, r := range v.Rows {
		got = append(got, r.Variant)
	}
	want := []string{"", "fenced", "fenced; without server-clock-jump"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("variants %q, want %q", got, want)
	}
}
