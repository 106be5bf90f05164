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
// PostgreSQL DSN). The measurements that run outside the engine (the sale,
// the takeover race) use it, so that neither names a server kind nor
// starts a server its own way.
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
