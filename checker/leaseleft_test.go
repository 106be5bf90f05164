package checker

import (
	"testing"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// TestLeaseLeft holds the holder's lease left at a fault, and the judgement
// of a fault that came too late, to the cases issue 44 met: a guest's
// holder killed 1.6 s after its grant with a 1 s lease, a native one 270 ms
// after it.
func TestLeaseLeft(t *testing.T) {
	const ttl = time.Second
	const at = int64(100 * time.Second) // the fault's time, monotonic ns
	fault := func(heldSince int64) lin.Event {
		return lin.FaultEvent(at, at+int64(ttl), lin.Injection{Kind: "client-kill", Target: "client-0",
			Clients: []int{0}, HeldSince: heldSince}, "")
	}
	before := func(d time.Duration) int64 { return at - int64(d) }
	tests := []struct {
		name           string
		fault          lin.Event
		leaseFromGrant bool
		left           time.Duration
		ok             bool
		late           bool
	}{
		{"struck at once after the grant", fault(before(3 * time.Millisecond)), true, 997 * time.Millisecond, true, false},
		{"struck after a native start-up delay", fault(before(270 * time.Millisecond)), true, 730 * time.Millisecond, true, false},
		{"a quarter left is enough", fault(before(750 * time.Millisecond)), true, 250 * time.Millisecond, true, false},
		{"less than a quarter left", fault(before(800 * time.Millisecond)), true, 200 * time.Millisecond, true, true},
		{"the lease ran out before the kill", fault(before(1594 * time.Millisecond)), true, -594 * time.Millisecond, true, true},
		{"a renewing lock keeps its lease while its holder lives", fault(before(1594 * time.Millisecond)), false, -594 * time.Millisecond, true, false},
		{"no client held the lock at the strike", fault(-1), true, 0, false, true},
		{"no client held it, renewing lock", fault(-1), false, 0, false, true},
		{"not recorded", fault(0), true, 0, false, false},
		{"no injection", lin.Event{Kind: lin.Fault, Time: at}, true, 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			left, ok := LeaseLeft(tc.fault, ttl)
			if left != tc.left || ok != tc.ok {
				t.Errorf("LeaseLeft = %v, %v; want %v, %v", left, ok, tc.left, tc.ok)
			}
			late, why := StruckTooLate(tc.fault, ttl, tc.leaseFromGrant)
			if late != tc.late {
				t.Errorf("StruckTooLate = %v (%q), want %v", late, why, tc.late)
			}
			if late != (why != "") {
				t.Errorf("StruckTooLate says why %q for late=%v: a late strike says why, only it", why, late)
			}
		})
	}
}
