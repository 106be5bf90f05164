package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// TestKillStrikesEarlyInTheLease: a kill at a failpoint strikes the client
// stopped there at once, not after the other workers started (issue 44: a
// guest's holder was killed 1.6 s into its 1 s lease, so the run tested
// nothing), and its record says when that holder took the lock, so the
// lease left at the kill can be read off the history: its grant when it
// stopped in its section, the moment it stood at its failpoint when it
// stopped inside its acquire (after the write, before any grant is
// recorded). One run each on one Redis: about nine seconds in all.
func TestKillStrikesEarlyInTheLease(t *testing.T) {
	const ttl = time.Second
	tests := []struct {
		impl, scenario string
		granted        bool // the victim's history records its grant before the kill
	}{
		{"redis-setnx-px", "holder-crash", true},
		// Killed between its SETNX and its EXPIRE: the key never frees, and
		// the run waits out the liveness bound (stuck), about 6 s.
		{"redis-setnx-expire", "crash-after-setnx", false},
	}
	defer assertNothingLeft(t)
	for _, tc := range tests {
		t.Run(tc.impl+"/"+tc.scenario, func(t *testing.T) {
			s := nemesis.Fixed[tc.scenario](tc.impl, false, ttl, checker.Bound(ttl))
			s.Topology, s.Seed = "single", 44
			r, err := engine.RunSchedule(context.Background(), s, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			var fault *lin.Event
			grant := map[int]int64{} // each client's last grant before the fault
			for i, e := range r.Events {
				if e.Kind == lin.Fault {
					fault = &r.Events[i]
					break
				}
				if e.Kind == lin.Acquired {
					grant[e.Client] = e.Time
				}
			}
			if fault == nil || fault.Injection == nil || len(fault.Injection.Clients) != 1 {
				t.Fatalf("no client-kill of one client in the history: %+v", fault)
			}
			victim, since := fault.Injection.Clients[0], fault.Injection.HeldSince
			g, granted := grant[victim]
			if granted != tc.granted {
				t.Fatalf("the victim's grant before the kill recorded: %v, want %v", granted, tc.granted)
			}
			if since <= 0 || since > fault.Time || (granted && since != g) {
				t.Fatalf("the fault records the holder held since %d (the fault at %d, the victim's grant at %d)", since, fault.Time, g)
			}
			left, ok := checker.LeaseLeft(*fault, ttl)
			if !ok {
				t.Fatalf("no lease left read off %+v", fault.Injection)
			}
			spec, err := impls.Lookup(s.Impl)
			if err != nil {
				t.Fatal(err)
			}
			if late, why := checker.StruckTooLate(*fault, ttl, engine.LeaseFromGrant(spec)); late {
				t.Errorf("the kill came too late to test the crash: %s", why)
			}
			t.Logf("the kill struck %v after the holder took the lock, %v of the lease left", time.Duration(fault.Time-since), left)
		})
	}
}
