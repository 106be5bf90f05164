package scenarios

import "github.com/locklab/locklab/topology"

// The Sentinel topology's cells: plain contention and a crashed holder
// (the same meaning as on one server, through the sentinels), and the
// fail-overs Sentinel itself decides: the master cut off with the holder
// on its side, and the master killed.
func init() {
	Register(onTopologies(scheduleScenario("sentinel-master-split",
		"on a Sentinel group, whichever server is the master while the holder is in its section is cut off, with the holder, "+
			"from the replicas, the sentinels and the other clients, past Sentinel's down-after time; a replica is promoted "+
			"and the others are granted by it while the holder writes on the old side",
		nil), topology.RedisSentinelName))
	Register(onTopologies(scheduleScenario("sentinel-master-kill",
		"on a Sentinel group, the master is SIGKILLed while the holder is in its section; Sentinel promotes a replica, "+
			"which has the holder's grant only if replication had carried it there",
		nil), topology.RedisSentinelName))
	for _, name := range []string{"contention", "holder-crash"} {
		extend(name, topology.RedisSentinelName)
	}
}
