package scenarios

import (
	"errors"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// holderPartition applies to locks on one lock server the lab can put on a
// host: PostgreSQL, ZooKeeper, or a single Redis node. Redlock's partitions
// are redlock-partition's.
func holderPartition(spec impls.Spec, _ bool) error {
	if err := hosts.Available(); err != nil {
		return err
	}
	b := spec.Backend
	if b.Kind == topology.Postgres || b.Kind == topology.ZooKeeper || (b.Kind == topology.Redis && b.Need().Count() == 1) {
		return nil
	}
	return errors.New("it cuts the holder off the one server its lock lives on (PostgreSQL, ZooKeeper or a single Redis)")
}

func init() {
	Register(scheduleScenario("holder-partition",
		"the holder, having read the resource, is cut off its lock servers by dropped packets (no reset, no closed socket) "+
			"for longer than the TTL; the resource stays reachable; it writes just before the heal",
		holderPartition))
}
