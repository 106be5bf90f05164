package checker

import (
	"fmt"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// LeaseLeft is how much of the holder's lease was left when fault struck:
// one ttl from the holder's grant (lin.Injection.HeldSince) minus the time
// from that grant to the fault. Negative: the lease had run out before the
// fault struck. It is the lease of a lock that counts its lease from the
// grant (SET NX PX, a lease without renewal); a lock that renews its lease
// while its holder lives had at least as much left. ok is false when the
// record does not say (no HeldSince: a scripted fault, an older history)
// or says that no client held the lock at the strike.
func LeaseLeft(fault lin.Event, ttl time.Duration) (left time.Duration, ok bool) {
	if fault.Injection == nil || fault.Injection.HeldSince <= 0 {
		return 0, false
	}
	return ttl - time.Duration(fault.Time-fault.Injection.HeldSince), true
}

// TooLateShare is the share of the lease that must be left when a fault
// strikes a holder for the run to test what its scenario says. A kill with
// less left times the lab, not the lock: the next client's grant then
// comes within the lab's own scheduling delays on a loaded two-core
// machine (starting a worker alone took 80 to 700 ms there), and whether
// the lock frees the dead holder's claim by its lease, or frees it at
// once, can no longer be told apart.
const TooLateShare = 4 // a quarter

// StruckTooLate reports whether fault came too late to test its holder:
// the record says no client held the lock when it struck (the section had
// already ended), or, for a lock whose lease runs from its grant
// (leaseFromGrant: it expires and does not renew), less than a
// TooLateShare-th of its lease was left. why says which, with the figures.
// A lock that renews its lease, or holds the lock by a session, had its
// whole protection at any strike into a live holder: for it only the
// ended section counts. A fault whose record does not say whom it struck
// is never judged too late here.
func StruckTooLate(fault lin.Event, ttl time.Duration, leaseFromGrant bool) (late bool, why string) {
	if fault.Injection == nil || fault.Injection.HeldSince == 0 {
		return false, ""
	}
	if fault.Injection.HeldSince < 0 {
		return true, "no client held the lock when the fault struck"
	}
	left, _ := LeaseLeft(fault, ttl)
	if !leaseFromGrant || left >= ttl/TooLateShare {
		return false, ""
	}
	if left < 0 {
		return true, fmt.Sprintf("the holder's lease had run out %v before the fault struck", (-left).Round(time.Millisecond))
	}
	return true, fmt.Sprintf("the fault struck with %v of the holder's %v lease left (less than 1/%d)",
		left.Round(time.Millisecond), ttl, TooLateShare)
}
