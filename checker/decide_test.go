package checker

import (
	"testing"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

const ms = int64(time.Millisecond)

// history builds n sequential critical sections starting at t0, one every
// step, each preceded by a grant, so the counter model accepts them.
func history(t0, step int64, n int, value int64) []lin.Event {
	var ev []lin.Event
	for i := 0; i < n; i++ {
		t := t0 + int64(i)*step
		ev = append(ev,
			lin.Event{Kind: lin.Acquired, Time: t, Client: i % 2},
			lin.Event{Kind: lin.Call, Time: t + 1, Client: i % 2, Op: value + int64(i)},
			lin.Event{Kind: lin.Read, Time: t + 2, Client: i % 2, Op: value + int64(i), Value: value + int64(i)},
			lin.Event{Kind: lin.Return, Time: t + 3, Client: i % 2, Op: value + int64(i), Status: lin.OK, Value: value + int64(i) + 1},
		)
	}
	return ev
}

func TestDecide(t *testing.T) {
	ttl := time.Second
	bound := int64(Bound(ttl))
	fault := func(at, end int64) lin.Event {
		return lin.Event{Kind: lin.Fault, Time: at, End: end, Text: "pause client 0"}
	}
	overlap := []lin.Event{
		{Kind: lin.Call, Time: 1, Client: 0, Op: 1}, {Kind: lin.Call, Time: 2, Client: 1, Op: 1},
		{Kind: lin.Read, Time: 3, Client: 0, Op: 1, Value: 0}, {Kind: lin.Read, Time: 4, Client: 1, Op: 1, Value: 0},
		{Kind: lin.Return, Time: 5, Client: 0, Op: 1, Status: lin.OK, Value: 1}, {Kind: lin.Return, Time: 6, Client: 1, Op: 1, Status: lin.OK, Value: 1},
	}
	tests := []struct {
		name   string
		events []lin.Event
		end    int64
		loss   []Window
		avail  []Window
		reach  string
		want   Verdict
	}{
		{"progress after the heal", append([]lin.Event{fault(0, 10*ms)}, history(20*ms, 10*ms, 40, 0)...), 0, nil, nil, "", Safe},
		{"lost update", overlap, 0, nil, nil, "", Unsafe},
		{"no grant within the bound after the heal",
			append(history(0, ms, 30, 0), append([]lin.Event{fault(40*ms, 50*ms)}, history(50*ms+bound+ms, ms, 10, 30)...)...), 0, nil, nil, "", Stuck},
		{"too few sections", append([]lin.Event{fault(0, 1)}, history(10*ms, ms, 5, 0)...), 0, nil, nil, "", Inconclusive},
		{"no grants after the fault", append(history(0, ms, 30, 0), fault(40*ms, 41*ms)), 41*ms + bound + ms, nil, nil, "", Stuck},
		{"heal too close to the end", append(history(0, ms, 30, 0), fault(40*ms, 41*ms)), 42 * ms, nil, nil, "", Inconclusive},
		{"quorum lost, no grants inside, grants after",
			append([]lin.Event{fault(0, 100*ms)}, history(200*ms, ms, 30, 0)...), 0, []Window{{"majority-cut", 10 * ms, 100 * ms}}, nil, "", Unavailable},
		{"quorum kept but no grants",
			append([]lin.Event{fault(0, 100*ms)}, history(200*ms, ms, 30, 0)...), 0, nil, []Window{{"minority-cut", 10 * ms, 100 * ms}}, "", Stuck},
		{"fault never reached the lock", append([]lin.Event{fault(0, 1)}, history(10*ms, ms, 30, 0)...), 0, nil, nil, "client clock reads", NotApplicable},
		{"no fault, long gap between grants", append(history(0, ms, 20, 0), history(20*ms+bound+ms, ms, 20, 20)...), 0, nil, nil, "", Stuck},
		{"no fault, grants stop for longer than the bound before the end", history(0, ms, 30, 0), 30*ms + bound + ms, nil, nil, "", Stuck},
		{"no fault, progress to the end", history(0, ms, 30, 0), 40 * ms, nil, nil, "", Safe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Events: tc.events, TTL: ttl, End: tc.end, QuorumLoss: tc.loss, Available: tc.avail,
				Minimum: DefaultMinimum, Reach: tc.reach, Timeout: 10 * time.Second})
			if d.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", d.Verdict, d.Detail, tc.want)
			}
		})
	}
}
