package lessons

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
)

// startLockServers starts the servers a lock declares on the single
// topology, as every run of that lock starts them (cluster.Start, which
// sweeps what killed runs left and stops its servers on an interrupt), and
// returns them with the address of the lock's kind (a Redis host:port, a
// PostgreSQL DSN). The one measurement that still runs outside the engine
// (lesson 17's claims of the source documents, docclaims) uses it, so
// that it names no server kind and starts no server its own way; the sale
// and the takeover race are engine jobs (engine.SaleJob,
// engine.TakeoverJob).
func startLockServers(ctx context.Context, lock string) (*cluster.Topology, string, error) {
	spec, err := impls.Lookup(lock)
	if err != nil {
		return nil, "", err
	}
	topo, err := cluster.Start(ctx, spec.Backend.Topology(), cluster.External{})
	if err != nil {
		return nil, "", fmt.Errorf("the servers of %s: %w", lock, err)
	}
	addr := topo.Endpoints().First(spec.Backend.Kind)
	if addr == "" {
		topo.Close()
		return nil, "", fmt.Errorf("the servers of %s: no %s server started", lock, spec.Backend.Kind)
	}
	return topo, addr, nil
}
