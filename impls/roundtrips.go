package impls

// RoundTrips is the number of sequential round trips one uncontended
// acquire-release pair costs, declared by the lock from reading its own
// code. The benchmark counts them from the servers' own counters and its
// bound divides by the count; the declaration is what a reader expects,
// and benchmark's TestDeclaredRoundTripsMatchServerCounters fails when the
// two disagree. Requests a lock sends to several nodes in parallel count
// once.
type RoundTrips struct {
	N    int    `json:"count"`
	Note string `json:"note"` // the requests, in order
	// CountedAs is what the server's counter sees per pair where it does
	// not count round trips (0: it does): PostgreSQL counts transactions,
	// and a lock held by an open transaction sends several statements in
	// one. The declaration is then checked against CountedAs, and the bound
	// divides by N.
	CountedAs int `json:"counted_as,omitempty"`
}
