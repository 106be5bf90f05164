package checker

import (
	"testing"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// The danger window is read off hand-built histories: client 0 holds the
// lock from t=100 (ms), the fault strikes it at t=200, and it works under
// that claim until t=2500; client 1 comes for the lock at various times
// (ms is decide_test.go's millisecond).

// holderHistory is client 0's claim: granted at 100, struck at 200 by a
// fault naming the clients struck (nil: a fault on the servers), read at
// 150, written back at 2500, released at 2600.
func holderHistory(struck []int) []lin.Event {
	return []lin.Event{
		{Kind: lin.Acquired, Time: 100 * ms, Client: 0},
		{Kind: lin.Call, Time: 120 * ms, Client: 0, Op: 1},
		{Kind: lin.Read, Time: 150 * ms, Client: 0, Op: 1},
		lin.FaultEvent(200*ms, 2000*ms, lin.Injection{Kind: "client-pause", Target: "client-0", Clients: struck}, ""),
		{Kind: lin.Return, Time: 2500 * ms, Client: 0, Op: 1, Status: lin.OK, Value: 1},
		{Kind: lin.Released, Time: 2600 * ms, Client: 0},
	}
}

// failOverHistory is client 0's claim struck at 200 by a master's kill
// whose promotion record is p (nil: none recorded).
func failOverHistory(p *lin.Promotion) []lin.Event {
	return []lin.Event{
		{Kind: lin.Acquired, Time: 100 * ms, Client: 0},
		{Kind: lin.Call, Time: 120 * ms, Client: 0, Op: 1},
		{Kind: lin.Read, Time: 150 * ms, Client: 0, Op: 1},
		lin.FaultEvent(200*ms, 2000*ms, lin.Injection{Kind: "server-kill", Target: "master", Servers: []string{"redis-1"}, Promotion: p}, ""),
		{Kind: lin.Return, Time: 2500 * ms, Client: 0, Op: 1, Status: lin.OK, Value: 1},
		{Kind: lin.Released, Time: 2600 * ms, Client: 0},
	}
}

// The promotion records of a Sentinel fail-over: the replica promoted had
// the master's whole stream, lacked its last 37 bytes, or was not read.
var (
	hadAll = &lin.Promotion{Master: "redis-1", MasterAt: "master_repl_offset 5238", Promoted: "redis-2",
		PromotedAt: "second_repl_offset-1 5238", Unit: "bytes"}
	lacked = &lin.Promotion{Master: "redis-1", MasterAt: "master_repl_offset 5238", Promoted: "redis-2",
		PromotedAt: "second_repl_offset-1 5201", Behind: 37, Unit: "bytes"}
	unread = &lin.Promotion{Master: "redis-1", MasterAt: "master_repl_offset 5238", Unread: "redis-2 unreachable"}
)

func with(events []lin.Event, more ...lin.Event) []lin.Event {
	out := append(append([]lin.Event(nil), events...), more...)
	lin.SortEvents(out)
	return out
}

func TestExposures(t *testing.T) {
	lease := Claim{Expires: true}
	renewed := Claim{Expires: true, Renews: true}
	session := Claim{}
	tests := []struct {
		name    string
		events  []lin.Event
		risk    Risk
		claim   Claim
		holders []int
		// want: the window's bounds in ms (0, 0 when it never opened),
		// the other clients' acts inside, and whether it exercised.
		start, end int64
		others     int
		exercised  bool
	}{
		{"a lease runs out one TTL after the grant; a refused acquire inside exercises",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1}),
			RiskAtExpiry, lease, nil, 1100, 2600, 1, true},
		{"an acquire that failed on the servers or ended unknown never met the lock, and does not",
			with(holderHistory([]int{0}),
				lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1, Text: lin.FailedUnknown + "EOF"},
				lin.Event{Kind: lin.AcquireFailed, Time: 1600 * ms, Client: 2, Text: lin.FailedBackend + "connection refused"}),
			RiskAtExpiry, lease, nil, 1100, 2600, 0, false},
		{"an acquire refused before the lease ran out does not",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.AcquireFailed, Time: 900 * ms, Client: 1}),
			RiskAtExpiry, lease, nil, 1100, 2600, 0, false},
		{"an acquire asked before the window and granted after it was waiting through it",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.Acquired, Time: 2700 * ms, Asked: 500 * ms, Client: 1}),
			RiskAtExpiry, lease, nil, 1100, 2600, 1, true},
		{"a renewed lease runs out one TTL after the strike",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.Call, Time: 1150 * ms, Client: 1, Op: 1}),
			RiskAtExpiry, renewed, nil, 1200, 2600, 0, false},
		{"another client's read after the renewed lease ran out exercises",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.Read, Time: 1250 * ms, Client: 1, Op: 1}),
			RiskAtExpiry, renewed, nil, 1200, 2600, 1, true},
		{"a session claim never opens a window under a pause",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1}),
			RiskAtExpiry, session, nil, 0, 2600, 0, false},
		{"a session claim opens when the server grants another client while the holder works",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.Acquired, Time: 1700 * ms, Client: 1}),
			RiskAtExpiry, session, nil, 1700, 2600, 1, true},
		{"a grant after the holder's last write is its release handing over, not a lost claim",
			with(holderHistory([]int{0}), lin.Event{Kind: lin.Acquired, Time: 2550 * ms, Client: 1}),
			RiskAtExpiry, session, nil, 0, 2600, 0, false},
		{"a fault on the servers opens the window at its strike, for whoever held the lock",
			with(holderHistory(nil), lin.Event{Kind: lin.Call, Time: 300 * ms, Client: 1, Op: 1}),
			RiskAtStrike, lease, nil, 200, 2600, 1, true},
		{"the engine's holder is the one exposed, whatever the history's order",
			with(holderHistory(nil), lin.Event{Kind: lin.Acquired, Time: 50 * ms, Client: 2}, lin.Event{Kind: lin.Call, Time: 300 * ms, Client: 1, Op: 1}),
			RiskAtStrike, lease, []int{0}, 200, 2600, 1, true},
		{"an acquire struck in flight and then refused was a claim at risk until it ended",
			[]lin.Event{
				lin.FaultEvent(200*ms, 0, lin.Injection{Kind: "server-kill", Target: "master"}, ""),
				{Kind: lin.Acquired, Time: 900 * ms, Asked: 150 * ms, Client: 1},
				{Kind: lin.AcquireFailed, Time: 2600 * ms, Asked: 100 * ms, Client: 0},
			},
			RiskAtStrike, lease, []int{0}, 200, 2600, 1, true},
		{"a grant confirmed after the strike exposes from the strike: the servers had made it before",
			[]lin.Event{
				lin.FaultEvent(200*ms, 0, lin.Injection{Kind: "net-split-with-holder", Target: "master"}, ""),
				{Kind: lin.Acquired, Time: 900 * ms, Asked: 250 * ms, Client: 1},
				{Kind: lin.Read, Time: 950 * ms, Client: 1, Op: 7},
				{Kind: lin.Acquired, Time: 2400 * ms, Asked: 100 * ms, Client: 0},
				{Kind: lin.Call, Time: 2450 * ms, Client: 0, Op: 1},
				{Kind: lin.Return, Time: 2500 * ms, Client: 0, Op: 1, Status: lin.OK, Value: 1},
			},
			RiskAtStrike, lease, []int{0}, 200, 2500, 2, true},
		{"nobody else in the window: not exercised",
			holderHistory(nil), RiskAtStrike, lease, nil, 200, 2600, 0, false},
		{"a promoted replica that lacked the master's last writes opens the window at the strike",
			with(failOverHistory(lacked), lin.Event{Kind: lin.Acquired, Time: 1700 * ms, Client: 1}),
			RiskAtPromotion, lease, []int{0}, 200, 2600, 1, true},
		{"a promoted replica that lacked them, with nobody coming, is not exercised",
			failOverHistory(lacked), RiskAtPromotion, lease, []int{0}, 200, 2600, 0, false},
		{"a promoted replica that had everything opens no window, though its lease ran out and another was granted",
			with(failOverHistory(hadAll), lin.Event{Kind: lin.Acquired, Time: 1700 * ms, Client: 1}),
			RiskAtPromotion, lease, []int{0}, 0, 2600, 0, false},
		{"the same history under the strike rule opens at the strike",
			with(failOverHistory(hadAll), lin.Event{Kind: lin.Acquired, Time: 1700 * ms, Client: 1}),
			RiskAtStrike, lease, []int{0}, 200, 2600, 1, true},
		{"an unread promotion assumes nothing: only another grant in the holder's section opens it",
			with(failOverHistory(unread), lin.Event{Kind: lin.Acquired, Time: 1700 * ms, Client: 1}),
			RiskAtPromotion, lease, []int{0}, 1700, 2600, 1, true},
		{"no promotion record and nobody granted: no window",
			with(failOverHistory(nil), lin.Event{Kind: lin.AcquireFailed, Time: 1700 * ms, Client: 1}),
			RiskAtPromotion, lease, []int{0}, 0, 2600, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xs := Exposures(tc.events, tc.risk, tc.claim, time.Second, tc.holders)
			if len(xs) != 1 {
				t.Fatalf("%d exposures, want 1: %+v", len(xs), xs)
			}
			x := xs[0]
			if x.Holder != 0 {
				t.Errorf("holder %d, want client 0 (%s)", x.Holder, x.Rule)
			}
			if x.Start/ms != tc.start || x.End/ms != tc.end {
				t.Errorf("window %d..%d ms, want %d..%d (%s)", x.Start/ms, x.End/ms, tc.start, tc.end, x.Rule)
			}
			if x.Others != tc.others || x.Exercised() != tc.exercised {
				t.Errorf("%d acts of others, exercised %v; want %d, %v (%s)", x.Others, x.Exercised(), tc.others, tc.exercised, x.Rule)
			}
		})
	}
}

// TestDecideExercise holds Decide to the rule: a clean run is safe only
// when it exercised its fault, n/a when the fault could not take the lock
// from its holder, and a counterexample stays unsafe whatever the window.
func TestDecideExercise(t *testing.T) {
	refused := lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1}
	// The holder takes the lock again after the heal, which is all the
	// liveness this small a history needs, and no other client's doing.
	holderHistory := func(struck []int) []lin.Event {
		return with(holderHistory(struck), lin.Event{Kind: lin.Acquired, Time: 2650 * ms, Client: 0})
	}
	tests := []struct {
		name   string
		events []lin.Event
		risk   Risk
		claim  Claim
		want   Verdict
	}{
		{"exercised", with(holderHistory([]int{0}), refused), RiskAtExpiry, Claim{Expires: true}, Safe},
		{"nobody came", holderHistory([]int{0}), RiskAtExpiry, Claim{Expires: true}, NotExercised},
		{"no expiry under a pause", with(holderHistory([]int{0}), refused), RiskAtExpiry, Claim{}, NotApplicable},
		{"not judged", holderHistory([]int{0}), RiskNotJudged, Claim{}, Safe},
		{"contention with one client", holderHistory([]int{0}), RiskContention, Claim{}, NotExercised},
		{"contention with two", with(holderHistory([]int{0}), lin.Event{Kind: lin.Call, Time: 2700 * ms, Client: 1, Op: 1},
			lin.Event{Kind: lin.Return, Time: 2710 * ms, Client: 1, Op: 1, Status: lin.Aborted}), RiskContention, Claim{}, Safe},
		{"a strike that finds no holder is a miss, not n/a", []lin.Event{
			lin.FaultEvent(50*ms, 0, lin.Injection{Kind: "server-kill", Target: "master"}, ""),
			{Kind: lin.Acquired, Time: 2650 * ms, Client: 0}}, RiskAtStrike, Claim{}, NotExercised},
		{"a fail-over that lost the last writes, with another client refused in the window", with(failOverHistory(lacked),
			lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1}, lin.Event{Kind: lin.Acquired, Time: 2650 * ms, Client: 0}),
			RiskAtPromotion, Claim{Expires: true}, Safe},
		{"a fail-over whose promoted replica had everything is not exercised, not n/a", with(failOverHistory(hadAll),
			lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1}, lin.Event{Kind: lin.Acquired, Time: 2650 * ms, Client: 0}),
			RiskAtPromotion, Claim{Expires: true}, NotExercised},
		{"recovery with nobody granted after the strike", holderHistory([]int{0}), RiskRecovery, Claim{}, NotExercised},
		{"recovery answered", with(holderHistory([]int{0}), lin.Event{Kind: lin.Acquired, Time: 2700 * ms, Client: 1}), RiskRecovery, Claim{}, Safe},
		// The guest crash of issue 44: a kill 900 ms into a 1 s lease
		// counted from the grant tests the lab's delays, not the lock.
		{"recovery from a kill with the lease nearly over", []lin.Event{
			{Kind: lin.Acquired, Time: 100 * ms, Client: 0},
			lin.FaultEvent(1000*ms, 0, lin.Injection{Kind: "client-kill", Target: "holder", Clients: []int{0}, HeldSince: 100 * ms}, ""),
			{Kind: lin.Acquired, Time: 1110 * ms, Client: 1}}, RiskRecovery, Claim{Expires: true}, NotExercised},
		{"recovery from a kill early in the lease", []lin.Event{
			{Kind: lin.Acquired, Time: 100 * ms, Client: 0},
			lin.FaultEvent(120*ms, 0, lin.Injection{Kind: "client-kill", Target: "holder", Clients: []int{0}, HeldSince: 100 * ms}, ""),
			{Kind: lin.Acquired, Time: 1110 * ms, Client: 1}}, RiskRecovery, Claim{Expires: true}, Safe},
		// A waiter's crash tests the queue, however little of the
		// holder's lease was left.
		{"recovery from a waiter's crash late in the holder's lease", []lin.Event{
			{Kind: lin.Acquired, Time: 100 * ms, Client: 0},
			lin.FaultEvent(1000*ms, 0, lin.Injection{Kind: "client-kill", Target: "client-2", Clients: []int{2}, HeldSince: 100 * ms}, ""),
			{Kind: lin.Acquired, Time: 1110 * ms, Client: 1}}, RiskRecovery, Claim{Expires: true}, Safe},
		// A renewing lock had its whole lease at any strike into a live
		// holder: only a strike that found no holder is too late.
		{"recovery of a renewing lock killed late in its first lease", []lin.Event{
			{Kind: lin.Acquired, Time: 100 * ms, Client: 0},
			lin.FaultEvent(1000*ms, 0, lin.Injection{Kind: "client-kill", Target: "holder", Clients: []int{0}, HeldSince: 100 * ms}, ""),
			{Kind: lin.Acquired, Time: 2000 * ms, Client: 1}}, RiskRecovery, Claim{Expires: true, Renews: true}, Safe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Events: tc.events, TTL: time.Second, Risk: tc.risk, Claim: tc.claim,
				End: 2800 * ms, Timeout: 10 * time.Second})
			if d.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", d.Verdict, d.Detail, tc.want)
			}
		})
	}
}
