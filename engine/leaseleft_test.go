package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// TestHolderCrashStrikesEarlyInTheLease: holder-crash kills the client
// stopped in its section at once, not after the other workers started
// (issue 44: a guest's holder was killed 1.6 s into its 1 s lease, so the
// run tested nothing), and its record says when that holder was granted
// the lock, so the lease left at the kill can be read off the history.
// One run on one Redis: about five seconds.
func TestHolderCrashStrikesEarlyInTheLease(t *testing.T) {
	const ttl = time.Second
	s := nemesis.Fixed["holder-crash"]("redis-setnx-px", false, ttl, checker.Bound(ttl))
	s.Topology, s.Seed = "single", 44
	defer assertNothingLeft(t)
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
	victim := fault.Injection.Clients[0]
	if got, want := fault.Injection.HeldSince, grant[victim]; got != want || got <= 0 {
		t.Fatalf("the fault records the holder held since %d, its history says it was granted at %d", got, want)
	}
	left, ok := checker.LeaseLeft(*fault, ttl)
	if !ok {
		t.Fatalf("no lease left read off %+v", fault.Injection)
	}
	if late, why := checker.StruckTooLate(*fault, ttl, true); late {
		t.Errorf("the kill came too late to test the crash: %s", why)
	}
	t.Logf("the kill struck %v after the grant, %v of the lease left", time.Duration(fault.Time-fault.Injection.HeldSince), left)
}
