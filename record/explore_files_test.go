package record

import (
	"slices"
	"testing"
)

// Files names every file a row links, the replays' histories too, and a
// row changed through them leaves the row it was copied from alone.
func TestExploreRowFiles(t *testing.T) {
	orig := ExploreRow{Schedule: "a-seed1.schedule.json", History: "a-seed1.history.jsonl.gz",
		ReplayHistories: []string{"a-seed1.replay-1.history.jsonl.gz"}}
	row := orig
	var got []string
	for _, f := range row.Files() {
		got = append(got, *f)
		*f = "t/" + *f
	}
	want := []string{"a-seed1.schedule.json", "a-seed1.history.jsonl.gz", "a-seed1.replay-1.history.jsonl.gz"}
	if !slices.Equal(got, want) {
		t.Errorf("Files() = %q, want %q (no empty timeline)", got, want)
	}
	if row.ReplayHistories[0] != "t/a-seed1.replay-1.history.jsonl.gz" || orig.ReplayHistories[0] != "a-seed1.replay-1.history.jsonl.gz" {
		t.Errorf("replay history: row %q, original %q; want the row's moved and the original's kept", row.ReplayHistories, orig.ReplayHistories)
	}
}
