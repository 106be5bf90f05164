package lessons

import (
	"path/filepath"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/workload/takeover"
)

// TestCommittedTakeoverAgreesWithPage holds lesson 3's measured race to
// what its prose reads from it: the checker finds every round safe (one
// winner, its refresh refused exactly where the key lost its expiry),
// losers' GETSETs landing in most races on either clock, and, with the
// clocks apart, the key ending with a loser's expiry.
func TestCommittedTakeoverAgreesWithPage(t *testing.T) {
	rec, err := loadTakeover(filepath.Join("..", "docs", "lessons"))
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || len(rec.Results) != len(takeoverSpreads) {
		t.Fatal("docs/lessons/takeover.json is missing or has not one row per clock setting: regenerate lesson 3")
	}
	for _, r := range rec.Results {
		if v, detail := engine.TakeoverVerdict(r); !checker.Survived(v) {
			t.Errorf("clocks ±%s: the race is %s: %s", r.ClockSpread, v, detail)
		}
		landed := r.Count(func(x takeover.Round) bool { return x.GetSets > 1 })
		if 2*landed <= len(r.Rounds) {
			t.Errorf("clocks ±%s: a loser's GETSET landed in %d of %d races, not most, as the page says", r.ClockSpread, landed, len(r.Rounds))
		}
		if r.ClockSpread != "0s" && r.Count(func(x takeover.Round) bool { return x.Overwritten }) == 0 {
			t.Errorf("clocks ±%s: no key ended with a loser's expiry, as the page says it does", r.ClockSpread)
		}
	}
}
