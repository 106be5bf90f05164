package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
)

// A counterexample that did not replay links the replay's own history, so
// why it did not is read from the run itself.
func TestExploreTableLinksTheReplaysHistory(t *testing.T) {
	dir := t.TempDir()
	rows := []exploreRow{
		{Impl: "redis-setnx-px", Verdict: checker.Unsafe, MinimalFaults: 1, MinimalDuration: "6.5s",
			Schedule: "redis-setnx-px-seed1.schedule.json", History: "redis-setnx-px-seed1" + ".history.jsonl.gz",
			Replays: []checker.Verdict{checker.Safe}, ReplayHistories: []string{"redis-setnx-px-seed1.replay-1.history.jsonl.gz"}},
		{Impl: "peer-redislock", Verdict: checker.Unsafe, MinimalFaults: 1, MinimalDuration: "6.5s",
			Schedule: "peer-redislock-seed1.schedule.json", History: "peer-redislock-seed1.history.jsonl.gz",
			Replays: []checker.Verdict{checker.Unsafe}},
	}
	o := tableOptions{Impls: "redis-setnx-px,peer-redislock", Seed: 1, Seeds: 1, TTL: time.Second, Clients: 4, Duration: time.Minute,
		Replays: 3, ShrinkBudget: time.Minute, ReplayChecks: 1}
	if err := writeExploreTable(dir, o, rows, "0123456789abcdef", time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| redis-setnx-px |"):
			if !strings.Contains(line, "did NOT replay") || !strings.Contains(line, "[replay 1's history](redis-setnx-px-seed1.replay-1.history.jsonl.gz)") {
				t.Errorf("the row that did not replay links no replay history:\n%s", line)
			}
		case strings.HasPrefix(line, "| peer-redislock |"):
			if strings.Contains(line, "replay 1's history") {
				t.Errorf("a row that replayed links a replay history:\n%s", line)
			}
		}
	}
}
