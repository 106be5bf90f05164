package checker

import (
	"testing"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// A split is read off hand-built histories: the cut strikes at t=1000
// (ms), is whole at 1400, its heal begins at 6500 and ends at 7000;
// clients 0 and 1 are on the old master's side, 2 and 3 on the
// majority's.

// splitHistory is the split's record with the old side's clients named,
// and the grants given (client, ms), each followed by its release.
func splitHistory(old []int, grants ...[2]int64) []lin.Event {
	events := []lin.Event{lin.FaultEvent(1000*ms, 7000*ms,
		lin.Injection{Kind: "split-brain-with-clients", Target: "master", Clients: old, Whole: 1400 * ms, Healing: 6500 * ms}, "")}
	for _, g := range grants {
		events = append(events,
			lin.Event{Kind: lin.Acquired, Time: g[1] * ms, Client: int(g[0])},
			lin.Event{Kind: lin.Released, Time: g[1]*ms + 10*ms, Client: int(g[0])})
	}
	lin.SortEvents(events)
	return events
}

func TestSplitsOf(t *testing.T) {
	tests := []struct {
		name   string
		events []lin.Event
		// want: grants on each side, the old side's last and the other's
		// first from the strike in ms (-1: none), and the old side's acts
		// after the other's first grant.
		splits            int
		old, new          int
		oldLast, newFirst int64
		oldAfterNew       int
		exercised         bool
		why               string
	}{
		{"both sides granted through the split",
			splitHistory([]int{0, 1}, [2]int64{0, 2000}, [2]int64{2, 3000}, [2]int64{1, 4000}, [2]int64{3, 5000}),
			1, 2, 2, 3000, 2000, 1, true, ""},
		{"the old side stopped before the other's first grant, and asked for the lock after it",
			with(splitHistory([]int{0, 1}, [2]int64{0, 2000}, [2]int64{2, 3000}),
				lin.Event{Kind: lin.AcquireFailed, Time: 3500 * ms, Asked: 3400 * ms, Client: 1}),
			1, 1, 1, 1000, 2000, 1, true, ""},
		{"the old side waited through the other side's grants, answered only once the heal began",
			with(splitHistory([]int{0, 1}, [2]int64{0, 1500}, [2]int64{2, 3000}, [2]int64{3, 4000}),
				lin.Event{Kind: lin.AcquireFailed, Time: 6600 * ms, Asked: 1600 * ms, Client: 1}),
			1, 1, 2, 500, 2000, 1, true, ""},
		{"an acquire asked once the heal began is not the old side's",
			with(splitHistory([]int{0, 1}, [2]int64{0, 1500}, [2]int64{2, 3000}),
				lin.Event{Kind: lin.AcquireFailed, Time: 6700 * ms, Asked: 6550 * ms, Client: 1}),
			1, 1, 1, 500, 2000, 0, false,
			"no client of the old side came for the lock after the majority side's first grant inside the split"},
		{"a majority client granted by the old master before the cut was whole is not the other side's",
			splitHistory([]int{0, 1}, [2]int64{2, 1100}, [2]int64{0, 2000}),
			1, 1, 0, 1000, -1, 0, false, "the majority side granted nothing inside the split"},
		{"grants while the heal runs, host by host, are no side's",
			splitHistory([]int{0, 1}, [2]int64{0, 2000}, [2]int64{2, 3000}, [2]int64{1, 6600}, [2]int64{3, 6700}),
			1, 1, 1, 1000, 2000, 0, false,
			"no client of the old side came for the lock after the majority side's first grant inside the split"},
		{"the old side never came back once the other side granted",
			splitHistory([]int{0, 1}, [2]int64{0, 2000}, [2]int64{2, 3000}),
			1, 1, 1, 1000, 2000, 0, false,
			"no client of the old side came for the lock after the majority side's first grant inside the split"},
		{"a fault naming one client is no split of clients",
			splitHistory([]int{0}, [2]int64{0, 2000}, [2]int64{2, 3000}),
			0, 0, 0, 0, 0, 0, false, "the run recorded no split with clients on the old side"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			splits := SplitsOf(tc.events)
			if len(splits) != tc.splits {
				t.Fatalf("%d splits, want %d", len(splits), tc.splits)
			}
			if tc.splits > 0 {
				s := splits[0]
				ms := func(d time.Duration) int64 {
					if d < 0 {
						return -1
					}
					return d.Milliseconds()
				}
				if s.OldGrants != tc.old || s.NewGrants != tc.new || ms(s.OldLast) != tc.oldLast ||
					ms(s.NewFirst) != tc.newFirst || s.OldAfterNew != tc.oldAfterNew {
					t.Errorf("got old %d (last %d ms), new %d (first %d ms), old after new %d; want %d (%d), %d (%d), %d",
						s.OldGrants, ms(s.OldLast), s.NewGrants, ms(s.NewFirst), s.OldAfterNew,
						tc.old, tc.oldLast, tc.new, tc.newFirst, tc.oldAfterNew)
				}
			}
			ex := Exercised(Input{Events: tc.events, Risk: RiskBothSides, TTL: time.Second})
			if ex.Exercised != tc.exercised || ex.Why != tc.why || !ex.Judged {
				t.Errorf("exercised %v (%q), want %v (%q)", ex.Exercised, ex.Why, tc.exercised, tc.why)
			}
		})
	}
}
