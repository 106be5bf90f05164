package conformance

import "testing"

// suiteSlots is how many locks' conformance suites one test binary runs at
// once: two, as make test's verdict matrix runs its shared cells. A suite
// starts servers of its own (Topology) and spends almost all its time
// waiting out TTLs and probe windows, whose margins are a large part of a
// TTL, so a second suite's light load beside it leaves them wide (the
// Redis locks' and the peers' packages passed side by side in every run
// while the machine was shared, load 4 to 14 on two cores). One after
// another, their suites took about three and a half of make test's
// minutes.
var suiteSlots = make(chan struct{}, 2)

// SideBySide runs t, one lock's whole suite on servers of its own, beside
// at most one other such suite of the same test binary. Call it before the
// suite starts its servers: its slot is given back after they have stopped
// (cleanups run last in, first out).
func SideBySide(t *testing.T) {
	t.Helper()
	t.Parallel()
	suiteSlots <- struct{}{}
	t.Cleanup(func() { <-suiteSlots })
}
