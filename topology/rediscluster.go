package topology

import (
	"errors"
	"fmt"
	"maps"
)

// RedisClusterName is the Redis Cluster topology's name.
const RedisClusterName = "redis-cluster"

// RedisClusterMasters is how many masters the lab's Redis Cluster has,
// each with one replica: the smallest cluster in which a master cut off
// alone is in a minority of masters, so the rest can fail it over.
const RedisClusterMasters = 3

func init() {
	Register(Named{
		Name: RedisClusterName,
		Summary: "a Redis Cluster of three masters (redis-1..3, the slots shared out between them) and a replica of each (redis-4..6), " +
			"each on a host of its own under network faults; clients are given every member and follow the slots (go-redis's cluster client), " +
			"and the cluster promotes a master's replica when the master is cut off or dead",
		Kinds:   []Kind{Redis},
		Declare: DeclareRedisCluster,
	})
}

// DeclareRedisCluster declares the members of a Redis Cluster as one group,
// redis-1..redis-6: the first half start as the masters, the second half
// as their replicas (redis-4 of redis-1, and so on), so a schedule aimed
// at redis-1 still means a master. The group is the lock's servers: its
// endpoint is how clients reach Redis (via cluster), so a lock needing
// one Redis server runs on it unchanged, its key in whichever slot it
// hashes to. A lock over several independent Redis servers (Redlock)
// cannot: the cluster is one system.
func DeclareRedisCluster(need Need) (Declaration, error) {
	if need.Kind != Redis {
		return Declaration{}, fmt.Errorf("a Redis Cluster carries Redis locks, not %s ones", need.Kind)
	}
	if need.Count() != 1 {
		return Declaration{}, fmt.Errorf("a Redis Cluster is one system, and the lock asks for %d independent servers", need.Count())
	}
	if need.Direct {
		return Declaration{}, errors.New("a Redis Cluster's clients follow its slots from member to member, and the lock's client takes plain server addresses only")
	}
	// need.Replicas is met: every master has a replica of its own. The
	// lock that waits for one (redis-setnx-px-wait) sends its WAIT on the
	// connection that wrote the grant, to the key's slot master: WAIT names
	// no key, and sent through the cluster client it went to any master,
	// which waited for its own replica (the benchmark counted 2.34 round
	// trips per pair, not 3).
	return Declaration{Groups: []Group{{Name: string(Redis), Kind: RedisCluster, Role: Lock, Count: 2 * RedisClusterMasters, Ensemble: true,
		Settings: maps.Clone(ReplicatedRedisSettings)}}}, nil
}
