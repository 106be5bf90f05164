package checker

import (
	"testing"
	"time"
)

// msec is a millisecond on the grants' clock.
const msec = time.Millisecond

// first is a winner granted at once with lesson 3's 100 ms lease; the
// tables set a second grant against it.
var first = TakeoverGrant{Start: 0, Reply: 1 * msec, Lease: 100 * msec}

// Two leases ran at once only when each reply came before the other's
// lease ended, apart only when one request went out after the other's
// lease ended; a request straddling the end cannot be placed.
func TestGrantsOverlap(t *testing.T) {
	tests := []struct {
		name   string
		second TakeoverGrant
		want   Overlap
	}{
		{"in the same race", TakeoverGrant{Start: 0, Reply: 2 * msec, Lease: 100 * msec}, LeasesOverlap},
		{"a clock ahead takes it 40 ms early", TakeoverGrant{Start: 60 * msec, Reply: 61 * msec, Lease: 100 * msec}, LeasesOverlap},
		{"a long request answered just before the end", TakeoverGrant{Start: 10 * msec, Reply: 99 * msec, Lease: 100 * msec}, LeasesOverlap},
		{"held back past the lease", TakeoverGrant{Start: 112 * msec, Reply: 113 * msec, Lease: 100 * msec}, LeasesApart},
		{"asked just after the end", TakeoverGrant{Start: 101 * msec, Reply: 150 * msec, Lease: 100 * msec}, LeasesApart},
		{"asked before the end, answered after", TakeoverGrant{Start: 99 * msec, Reply: 101 * msec, Lease: 100 * msec}, LeasesUnplaced},
		{"asked at the end", TakeoverGrant{Start: 100 * msec, Reply: 101 * msec, Lease: 100 * msec}, LeasesUnplaced},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GrantsOverlap(first, tc.second); got != tc.want {
				t.Errorf("GrantsOverlap(first, %+v) = %d, want %d", tc.second, got, tc.want)
			}
			if got := GrantsOverlap(tc.second, first); got != tc.want {
				t.Errorf("GrantsOverlap(%+v, first) = %d, want %d: the order of the two must not matter", tc.second, got, tc.want)
			}
		})
	}
}

// A round is a late takeover only when it has more than one winner, all
// timed, and every two grants' leases apart.
func TestLateTakeover(t *testing.T) {
	late := TakeoverGrant{Start: 112 * msec, Reply: 113 * msec, Lease: 100 * msec}
	later := TakeoverGrant{Start: 230 * msec, Reply: 231 * msec, Lease: 100 * msec}
	tests := []struct {
		name  string
		round TakeoverRound
		want  bool
	}{
		{"one winner", TakeoverRound{Winners: 1, Grants: []TakeoverGrant{first}}, false},
		{"two winners, the second past the first's lease", TakeoverRound{Winners: 2, Grants: []TakeoverGrant{first, late}}, true},
		{"three winners, each past the one before", TakeoverRound{Winners: 3, Grants: []TakeoverGrant{first, late, later}}, true},
		{"two winners at once", TakeoverRound{Winners: 2, Grants: []TakeoverGrant{first, {Start: 0, Reply: 2 * msec, Lease: 100 * msec}}}, false},
		{"a late one and one at once", TakeoverRound{Winners: 3, Grants: []TakeoverGrant{first, late, {Start: 113 * msec, Reply: 114 * msec, Lease: 100 * msec}}}, false},
		{"two winners, untimed", TakeoverRound{Winners: 2}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LateTakeover(tc.round); got != tc.want {
				t.Errorf("LateTakeover = %v, want %v", got, tc.want)
			}
		})
	}
}

// The holder's Refresh is judged against the key only when its reply
// came before the holder's lease ended; a round that timed nothing is
// judged as before.
func TestRefreshWithinLease(t *testing.T) {
	tests := []struct {
		name  string
		round TakeoverRound
		want  bool
	}{
		{"untimed", TakeoverRound{Winners: 1}, true},
		{"answered inside the lease", TakeoverRound{Winners: 1, Grants: []TakeoverGrant{first}, RefreshReply: 3 * msec}, true},
		{"answered after the lease", TakeoverRound{Winners: 1, Grants: []TakeoverGrant{first}, RefreshReply: 115 * msec}, false},
		{"the last winner's lease counts", TakeoverRound{Winners: 2, Grants: []TakeoverGrant{first, {Start: 112 * msec, Reply: 113 * msec, Lease: 100 * msec}}, RefreshReply: 115 * msec}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RefreshWithinLease(tc.round); got != tc.want {
				t.Errorf("RefreshWithinLease = %v, want %v", got, tc.want)
			}
		})
	}
}
