package scenarios

import (
	"errors"
	"fmt"
	"github.com/locklab/locklab/checker"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
)

// holderPartition applies to a lock whose server kind says a holder cut
// off it is a cell the lab has shown and reviewed
// (cluster.ServerKind.HolderPartition): PostgreSQL, ZooKeeper, a single
// Redis node. A kind left out says why, and the cell's n/a says it too.
func holderPartition(spec impls.Spec, _ bool) error {
	if err := hosts.Available(); err != nil {
		return err
	}
	if spec.Backend.InProcess || spec.Backend.Kind == "" {
		return errors.New("it cuts the holder off its lock's servers, and an in-process lock has none")
	}
	k, err := cluster.KindOf(spec.Backend.Kind)
	if err != nil {
		return fmt.Errorf("it cuts the holder off its lock's servers: %w", err)
	}
	return k.HolderPartition(spec.Backend.Need().Count())
}

func init() {
	Register(scheduleScenario("holder-partition", checker.RiskAtExpiry,
		"the holder, having read the resource, is cut off its lock servers by dropped packets (no reset, no closed socket) "+
			"for longer than the TTL; the resource stays reachable; it writes just before the heal",
		holderPartition))
}
