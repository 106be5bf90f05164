package redislock_test

import "testing"

// suiteSlots is how many locks' conformance suites run at once: two, as
// make test's verdict matrix runs its shared cells. A suite starts servers
// of its own (conformance.Topology) and spends almost all its time waiting
// out TTLs and probe windows, whose margins are a large part of a TTL, so
// a second suite's light load beside it leaves them wide (the package
// passed side by side in every run while the machine was shared, load 4 to
// 14 on two cores). One after another, the seven suites on a single Redis
// took about two of make test's minutes.
var suiteSlots = make(chan struct{}, 2)

// sideBySide runs t, one lock's whole suite on servers of its own, beside
// at most one other such suite of the same test. Its slot is given back
// after the servers have stopped (cleanups run last in, first out, and the
// suite's servers are registered after this).
func sideBySide(t *testing.T) {
	t.Helper()
	t.Parallel()
	suiteSlots <- struct{}{}
	t.Cleanup(func() { <-suiteSlots })
}
