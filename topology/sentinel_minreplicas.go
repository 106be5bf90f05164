package topology

import "maps"

// RedisSentinelMinReplicasName is the Sentinel topology with the
// mitigation the Redis documentation gives for the isolated old master:
// every Redis of the group refuses writes unless a replica has
// acknowledged replication within the lag bound.
const RedisSentinelMinReplicasName = "redis-sentinel-min-replicas"

// MinReplicasSettings are the Redis settings of redis-sentinel-min-replicas,
// on the master and on both replicas (a promoted replica is the next
// master, and Sentinel carries no settings over): one replica must have
// acknowledged within a second (replicas acknowledge every second, and the
// bound is in whole seconds; one is the tightest), so a master cut off its
// replicas refuses writes (NOREPLICAS) a second or two after the cut,
// where Sentinel promotes a replica after about a second and a half.
var MinReplicasSettings = map[string]string{"min-replicas-to-write": "1", "min-replicas-max-lag": "1"}

// SentinelTopologies are the Sentinel groups: the Sentinel scenarios run
// on each, so every lock and scenario of redis-sentinel runs with the
// mitigation too.
var SentinelTopologies = []string{RedisSentinelName, RedisSentinelMinReplicasName}

func init() {
	Register(Named{
		Name: RedisSentinelMinReplicasName,
		Summary: "redis-sentinel with min-replicas-to-write 1 and min-replicas-max-lag 1 on every Redis of the group: " +
			"a master that has heard from no replica for a second refuses writes",
		SameRequestsAs: RedisSentinelName,
		Kinds:          []Kind{Redis},
		Declare: func(need Need) (Declaration, error) {
			d, err := RedisSentinel(need)
			if err != nil {
				return Declaration{}, err
			}
			for i, g := range d.Groups {
				if g.Kind == Redis {
					s := maps.Clone(g.Settings)
					if s == nil {
						s = map[string]string{}
					}
					maps.Copy(s, MinReplicasSettings)
					d.Groups[i].Settings = s
				}
			}
			return d, nil
		},
	})
}
