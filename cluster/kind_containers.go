package cluster

import (
	"errors"
	"fmt"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// What container mode can do with a declaration: each server kind answers
// for its own groups, so a topology the containers cannot carry says why
// before any server starts, in every mode. A test in local mode holds every
// named topology to an answer (kind_containers_test.go), so the mode
// cannot lose a topology unseen, and a test that starts a topology asks
// StartsHere and skips with its reason.

// ContainerRefuser is a server kind that container mode cannot start in
// every shape it starts locally: InContainers says why it cannot start
// group g (nil when it can), whatever mode this process runs in. A kind
// without it starts every group in containers that it starts locally.
type ContainerRefuser interface {
	InContainers(g topology.Group) error
}

// InContainers says why container mode cannot start decl's servers (nil
// when it can), whatever mode this process runs in: the lab's hosts are
// not applicable there, and each group's kind answers for the group. Every
// group's reason is given, not only the first's: the Sentinel group's
// Redis master is refused for its settings, but the sentinels are what
// container mode could never start.
func InContainers(decl topology.Declaration) error {
	var errs []error
	if decl.Hosts {
		errs = append(errs, errHostsInContainers)
	}
	for _, g := range decl.Groups {
		k, err := KindOf(g.Kind)
		if err != nil {
			return err
		}
		if r, ok := k.(ContainerRefuser); ok {
			if err := r.InContainers(g); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", g.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// StartsHere says why decl's servers cannot start in this process's server
// mode (nil when they can, as far as anything can tell before a start): in
// container mode what InContainers says, the lab's hosts where they are
// declared and cannot be made, and the kinds' own limits on ensembles and
// replicas (Ensembles). A missing binary or image is found at the start.
func StartsHere(decl topology.Declaration) error {
	if ContainerMode() {
		if err := InContainers(decl); err != nil {
			return err
		}
	}
	if decl.Hosts {
		if err := hosts.Available(); err != nil {
			return err
		}
	}
	return Ensembles(decl)
}

// errHostsInContainers: the lab's hosts are network namespaces on this
// machine, which a container's server does not join.
var errHostsInContainers = fmt.Errorf("servers on the lab's hosts (network namespaces) are not applicable in container mode: a container is cut off its network with Node.Disconnect instead; run it with %s=%s", ServersEnv, ServersLocal)

// errSentinelInContainers: clients ask a sentinel where the master is,
// and it answers with the address the servers know each other by: in
// containers, an address on the engine's network, which the lab's clients
// on this machine do not reach (they reach each container through a port
// published on loopback). Announcing the published address instead
// (replica-announce-ip, sentinel announce-ip) would send the sentinels and
// replicas, inside their containers, to their own loopback.
var errSentinelInContainers = fmt.Errorf("container mode starts no Redis Sentinel: a sentinel tells clients the master's address on the engine's network, which clients on this machine do not reach; run it with %s=%s", ServersEnv, ServersLocal)

// errRedisClusterInContainers: a cluster client learns every slot's
// master from the members' own view (CLUSTER SLOTS, and the MOVED
// replies), which in containers names addresses on the engine's network
// that the lab's clients on this machine do not reach; announcing the
// published addresses instead (cluster-announce-ip) would point the
// members, inside their containers, at their own loopback for the
// cluster bus.
var errRedisClusterInContainers = fmt.Errorf("container mode starts no Redis Cluster: its members tell clients each slot's master by its address on the engine's network, which clients on this machine do not reach; run it with %s=%s", ServersEnv, ServersLocal)

// errPostgresReplicaInContainers: the lab makes a replica with
// pg_basebackup into a data dir on this machine, and the fail-over moves
// the primary's address between the lab's hosts.
var errPostgresReplicaInContainers = fmt.Errorf("a PostgreSQL replica runs in local mode only: the lab makes it with pg_basebackup into a data dir on this machine, and its fail-over moves the primary's address between the lab's hosts, which container mode does not have; run it with %s=%s", ServersEnv, ServersLocal)

// errMySQLReplicaInContainers: the lab starts a replica on a copy of its
// primary's data dir on this machine, and the fail-over moves the
// primary's address between the lab's hosts.
var errMySQLReplicaInContainers = fmt.Errorf("a MySQL replica runs in local mode only: the lab starts it on a copy of its primary's data dir on this machine, and its fail-over moves the primary's address between the lab's hosts, which container mode does not have; run it with %s=%s", ServersEnv, ServersLocal)

// redisSettingsInContainers says why container mode cannot start a Redis
// with settings: the image's server runs with the image's own.
func redisSettingsInContainers(settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	return fmt.Errorf("container mode starts Redis with the image's settings only, not %s; run it with %s=%s", settingsList(settings, "", " "), ServersEnv, ServersLocal)
}

// InContainers: a Redis with declared settings cannot start there.
func (redisKind) InContainers(g topology.Group) error { return redisSettingsInContainers(g.Settings) }

func (sentinelKind) InContainers(topology.Group) error { return errSentinelInContainers }

func (redisClusterKind) InContainers(topology.Group) error { return errRedisClusterInContainers }

// InContainers: a single PostgreSQL starts in a container, a replica not.
func (postgresKind) InContainers(g topology.Group) error {
	if g.ReplicaOf != "" {
		return errPostgresReplicaInContainers
	}
	return nil
}

// InContainers: a single MySQL starts in a container, a replica not.
func (mysqlKind) InContainers(g topology.Group) error {
	if g.ReplicaOf != "" {
		return errMySQLReplicaInContainers
	}
	return nil
}

// The compiler holds that every kind above answers through the interface.
var _ = []ContainerRefuser{redisKind{}, sentinelKind{}, redisClusterKind{}, postgresKind{}, mysqlKind{}}
