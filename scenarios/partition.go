package scenarios

import (
	"errors"
	"fmt"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// holderPartition applies to a lock whose server kind says a holder cut
// off it is a cell the lab has shown and reviewed
// (cluster.ServerKind.HolderPartition): PostgreSQL, MySQL, ZooKeeper,
// etcd, a single Redis node. A kind left out says why, and the cell's n/a
// says it too.
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

// endsSilentSessions applies holder-partition-long where the lock's
// servers, as the topology declares them, end a silent client's session
// on their own (cluster.ServerKind.SilentClient): a ZooKeeper session,
// an etcd lease, a database with a keep-alive and user timeout or an
// idle timeout declared. Elsewhere the longer cut shows nothing holder-partition does
// not, and the kind says why.
func endsSilentSessions(spec impls.Spec, decl topology.Declaration) error {
	k, err := cluster.KindOf(spec.Backend.Kind)
	if err != nil {
		return err
	}
	for _, n := range decl.Nodes() {
		if n.Role != topology.Lock || n.Kind != spec.Backend.Kind {
			continue
		}
		if err := k.SilentClient(n.Settings); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	Register(scheduleScenario("holder-partition", checker.RiskAtExpiry,
		"the holder, having read the resource, is cut off its lock servers by dropped packets (no reset, no closed socket) "+
			"for longer than the TTL; the resource stays reachable; it writes just before the heal",
		holderPartition))
	long := scheduleScenario("holder-partition-long", checker.RiskAtExpiry,
		"holder-partition's cut, 5 s longer (8 s at a 1 s TTL): past the server's own limit on a silent client, "+
			"which the topology declares (on the single topology, ZooKeeper's session timeout and etcd's lease TTL, the lock's TTL; "+
			"on "+topology.PGKeepalivesName+", TCP keep-alive and tcp_user_timeout giving the connection up "+topology.PGSilence+" after the server last heard it; "+
			"on "+topology.MySQLWaitTimeoutName+", wait_timeout ending a session that sent no command for 1 s), so the server ends the holder's session, "+
			"and the locks bound to it, while the holder still reaches the resource; it writes a TTL before the heal",
		holderPartition)
	long.OnServers = endsSilentSessions
	long.Topologies = []string{topology.SingleName, topology.PGKeepalivesName, topology.MySQLWaitTimeoutName}
	Register(long)
}
