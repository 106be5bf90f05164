package benchmark

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/topology"
)

// What a lock costs its servers is read from the servers' own counters
// before and after the contended measurement, and divided by the number of
// acquisitions: a polling lock pays for every failed attempt, a lock that
// waits on a notification does not.

// costUnit says what the cost figure counts for a backend: its server
// kind's unit.
func costUnit(backend string) string {
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return ""
	}
	return k.CostUnit()
}

// serverCounter reads a backend's cumulative request count from its
// servers (cluster.ServerKind.Served); settle is set for a reading taken
// after the lock clients closed.
func (b *bench) serverCounter(ctx context.Context, backend string, settle bool) (float64, error) {
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return 0, fmt.Errorf("no server counter for backend %q: %w", backend, err)
	}
	return k.Served(ctx, b.topo.Endpoints()[k.Kind()], settle)
}

// keepsCountedClients says whether the clients a backend's counter is
// read around may be the run's kept ones (lockers): not where the count
// needs them closed (cluster.ServerKind.ServedAtSessionEnd).
func keepsCountedClients(backend string) bool {
	k, err := cluster.KindOf(topology.Kind(backend))
	return err != nil || !k.ServedAtSessionEnd()
}

// costUnits is every server kind's cost unit, for the report's settings.
func costUnits() map[string]string {
	out := map[string]string{}
	for _, k := range cluster.KindNames() {
		out[k] = costUnit(k)
	}
	return out
}

// kindAs is a backend's server kind as the optional interface T
// (cluster.CommandCounter, cluster.CommandTimer), or T's zero value when
// the kind is unknown or does not implement it.
func kindAs[T any](backend string) T {
	var zero T
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return zero
	}
	t, _ := k.(T)
	return t
}

// addCommands adds each command's calls between two readings to sum.
func addCommands(sum, before, after map[string]float64) {
	for cmd, n := range after {
		if d := n - before[cmd]; d > 0 {
			sum[cmd] += d
		}
	}
}

// sumCommands is a by-command reading's total: the same count Served
// gives, since both leave out the same set-up commands.
func sumCommands(counts map[string]float64) float64 {
	var n float64
	for _, c := range counts {
		n += c
	}
	return n
}
