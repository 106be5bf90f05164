package benchmark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// The round trips of an uncontended acquire-release pair are counted by
// the servers themselves: one client does countPairs pairs alone while the
// servers count the requests they receive, and the count is divided by
// the pairs. Redis counts through MONITOR, the server's own feed of the
// commands it runs, because its counters (INFO commandstats,
// total_commands_processed) also count every command a Lua script calls,
// which costs no round trip; MONITOR marks those with "lua" and they are
// left out. ZooKeeper counts zk_packets_received (mntr); PostgreSQL the
// transactions of pg_stat_database (a statement outside a transaction block
// is one transaction, and no lock here opens a block per pair); MySQL its
// Questions and prepares (a prepared statement costs a round trip to
// prepare and one to execute, and Questions counts only the second). Commands
// sent in one pipeline are one round trip but several in the feed: no lock
// pipelines on its uncontended path (redis-fair does only while waiting).

// countPairs is enough for a stray request (a session ping, a watchdog
// renewal) to move the figure by well under one round trip.
const countPairs = 300

// roundTripCounter names what a backend's count is read from: its server
// kind's answer (cluster.ServerKind.RoundTripCounter).
func roundTripCounter(backend string) string {
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return ""
	}
	return k.RoundTripCounter()
}

// countAttempts bounds the counts started over: a count whose request
// timed out (impls.ErrUnknown; Redlock gives a node 50 ms at most, which a
// loaded machine's stall can pass) counted a retry nobody asked for or a
// pair cut short, so it is thrown away whole and counted again from zero,
// on a fresh client and key; any other error ends the count.
const countAttempts = 3

// countRoundTrips runs countPairs uncontended pairs of one client and
// returns what the servers counted.
func (b *bench) countRoundTrips(ctx context.Context, s impls.Spec) (*record.MeasuredRoundTrips, error) {
	be := backendOf(s)
	if be == inProcess {
		return nil, nil
	}
	var err error
	for attempt := 1; attempt <= countAttempts; attempt++ {
		var m *record.MeasuredRoundTrips
		if m, err = b.countRoundTripsOnce(ctx, s, be); err == nil || !errors.Is(err, impls.ErrUnknown) {
			return m, err
		}
	}
	return nil, fmt.Errorf("%w (%d counts in a row spoiled by a timeout)", err, countAttempts)
}

// countRoundTripsOnce is one count of countPairs pairs.
func (b *bench) countRoundTripsOnce(ctx context.Context, s impls.Spec, be string) (*record.MeasuredRoundTrips, error) {
	key := b.key()
	clients, err := b.newClients(load{spec: s, clients: 1, keys: func(int) string { return key }}, nil)
	if err != nil {
		return nil, err
	}
	c := clients[0]
	closed := false
	closeClient := func() {
		if !closed {
			c.close()
			closed = true
		}
	}
	defer closeClient()
	// Warm up, as the timed workloads do: connections and scripts are set
	// up before anything is counted.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if lease, err := c.locker.Acquire(wctx, key+"-warm"); err == nil {
		_ = lease.Release(wctx)
	}
	cancel()

	var perNode func() ([]float64, error)
	// A kind whose round trips its feed counts (cluster.FeedCounter: Redis
	// MONITOR) is watched from here on; any other's counter is read before
	// and after.
	if fc, ep, ok := b.feedCounter(be); ok {
		stop, closeFn, err := fc.StartFeedCount(ctx, ep)
		if err != nil {
			return nil, err
		}
		defer closeFn()
		perNode = func() ([]float64, error) { return stop(ctx) }
	} else {
		before, err := b.serverCounter(ctx, be, false)
		if err != nil {
			return nil, err
		}
		perNode = func() ([]float64, error) {
			after, err := b.serverCounter(ctx, be, true)
			return []float64{after - before}, err
		}
	}
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i := 0; i < countPairs; i++ {
		lease, err := c.locker.Acquire(actx, key)
		if err != nil {
			return nil, fmt.Errorf("count round trips of %s: acquire %d: %w", s.Name, i, err)
		}
		if err := lease.Release(actx); err != nil {
			return nil, fmt.Errorf("count round trips of %s: release %d: %w", s.Name, i, err)
		}
	}
	// Closed before the last reading: PostgreSQL flushes a backend's
	// counts when it exits.
	closeClient()
	counts, err := perNode()
	if err != nil {
		return nil, err
	}
	busiest := 0.0
	for _, n := range counts {
		busiest = max(busiest, n)
	}
	m := &record.MeasuredRoundTrips{PerPair: busiest / countPairs, Pairs: countPairs, Counter: roundTripCounter(be)}
	// What the lock declares (impls.Spec.RoundTrips) goes beside the count.
	if rt := s.RoundTrips; rt.N > 0 {
		m.Declared, m.Note, m.DeclaredCount = rt.N, rt.Note, rt.CountedAs
	}
	return m, nil
}

// feedCounter is backend be's kind as a cluster.FeedCounter, with the
// endpoint its locks use, when its round trips are counted from a feed.
func (b *bench) feedCounter(be string) (cluster.FeedCounter, topology.Endpoint, bool) {
	k, err := cluster.KindOf(topology.Kind(be))
	if err != nil {
		return nil, topology.Endpoint{}, false
	}
	fc, ok := k.(cluster.FeedCounter)
	return fc, b.topo.Endpoints()[k.Kind()], ok
}
