package lessons

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The page's block says which rounds were late takeovers and which
// refreshes came after their lease, only when the race had any, and the
// table's refusals leave out a refresh refused after the lease.
func TestTakeoverBlockLate(t *testing.T) {
	const ms = time.Millisecond
	first := takeover.Grant{Client: "client-0", Start: 0, Reply: 1 * ms, Lease: 100 * ms}
	won := takeover.Round{Winners: 1, Grants: []takeover.Grant{first}, RefreshReply: 2 * ms}
	late := takeover.Round{Winners: 2, Grants: []takeover.Grant{first, {Client: "client-3", Start: 112 * ms, Reply: 113 * ms, Lease: 100 * ms}}, RefreshReply: 114 * ms}
	refusedLate := takeover.Round{Winners: 1, Grants: []takeover.Grant{first}, RefreshRefused: true, RefreshReply: 115 * ms}
	row := func(spread string, rounds ...takeover.Round) takeover.Result {
		return takeover.Result{Clients: 8, TTL: "100ms", ClockSpread: spread, Rounds: rounds}
	}
	tests := []struct {
		name          string
		results       []takeover.Result
		want, notWant []string
	}{
		{"none late", []takeover.Result{row("0s", won, won)}, nil, []string{"Late takeovers", "Refreshes after the lease"}},
		{"late takeovers on both clocks", []takeover.Result{row("0s", won, late), row("5ms", late, late)},
			[]string{"Late takeovers (rounds: 1 on one clock, 2 with clocks ±5ms)"}, []string{"Refreshes after the lease"}},
		{"a refresh after the lease", []takeover.Result{row("5ms", won, refusedLate)},
			[]string{"Refreshes after the lease (rounds: 1 with clocks ±5ms)", "| 2 | 0.0, 0 | 0 | 0 | 0 |"}, []string{"Late takeovers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := takeoverBlock(&TakeoverRecord{Generated: "now", Results: tt.results})
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("the block does not say %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("the block says %q:\n%s", w, got)
				}
			}
		})
	}
}
