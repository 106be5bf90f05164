package checker

import "time"

// A race for a lock whose holder went away may grant it twice: two
// holders at once, or a racer held back past the first winner's lease
// (a loaded machine) that found the lease over and took the lock, as the
// lock is meant to. Only when each grant was asked and answered tells
// them apart: a client can time its request, not the moment the server
// granted it, so two grants' leases are judged to have run at once, or
// apart, only when those times prove it.

// TakeoverGrant is one winner's grant on one clock of the measuring
// machine: its request went out at Start and its reply came back at
// Reply, so it was granted between the two, and the lease it was granted
// ends Lease after Start (its expiry, read on the winner's clock, which is
// also the clock the lock judged it by, counted from that clock at Start).
type TakeoverGrant struct {
	Start, Reply, Lease time.Duration
}

// LeaseEnd is when g's lease ends, on the grants' clock.
func (g TakeoverGrant) LeaseEnd() time.Duration { return g.Start + g.Lease }

// Overlap is what two grants' times say of their leases.
type Overlap int

const (
	// LeasesApart: one grant's request went out after the other's lease
	// had ended, so it took over a lease that was over.
	LeasesApart Overlap = iota
	// LeasesOverlap: each grant's reply came before the other's lease
	// ended, so both were granted while the other's lease ran: two
	// holders at once, wherever in their requests the grants fell.
	LeasesOverlap
	// LeasesUnplaced: one request straddles the other's lease end, and
	// the times cannot tell on which side of it the grant fell.
	LeasesUnplaced
)

// GrantsOverlap says whether a's and b's leases ran at once. Each lease
// runs from its grant, somewhere in its request, to its LeaseEnd; only
// the two outcomes the times prove are said, the rest is LeasesUnplaced.
func GrantsOverlap(a, b TakeoverGrant) Overlap {
	switch {
	case a.Reply < b.LeaseEnd() && b.Reply < a.LeaseEnd():
		return LeasesOverlap
	case a.Start > b.LeaseEnd() || b.Start > a.LeaseEnd():
		return LeasesApart
	}
	return LeasesUnplaced
}

// LateTakeover reports whether r's winners took the lock one after
// another's lease had ended: more than one, every one timed, and every
// two LeasesApart. It is the lock working as designed, a racer held back
// past the first winner's lease (a loaded machine) finding it expired.
func LateTakeover(r TakeoverRound) bool {
	return r.Winners > 1 && len(r.Grants) == r.Winners && worstOverlap(r.Grants) == LeasesApart
}

// worstOverlap is the worst of every two grants' Overlap: one overlap
// outranks any unplaced pair, which outranks apart.
func worstOverlap(grants []TakeoverGrant) Overlap {
	worst := LeasesApart
	for i := range grants {
		for j := i + 1; j < len(grants); j++ {
			switch GrantsOverlap(grants[i], grants[j]) {
			case LeasesOverlap:
				return LeasesOverlap
			case LeasesUnplaced:
				worst = LeasesUnplaced
			}
		}
	}
	return worst
}

// RefreshWithinLease reports whether r's holder (its last winner) asked
// for its Refresh while its lease still ran by its own clock, the only
// Refresh RefreshMatchesKey can judge: the lock reads its clock between
// the request and the reply, so a reply before the lease's end proves it.
// A round that did not time its grants is taken to have (as it was
// meant to: the race ends well inside the lease).
func RefreshWithinLease(r TakeoverRound) bool {
	if len(r.Grants) == 0 {
		return true
	}
	return r.RefreshReply < r.Grants[len(r.Grants)-1].LeaseEnd()
}
