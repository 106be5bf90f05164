package scenarios

import (
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// Split brain with clients on both sides (nemesis/split_brain.go): on the
// Sentinel topologies, the master stays alive and is cut off with the
// holder and one more client, while the replicas, the sentinels and the
// other two clients promote a replica and use it. On both Sentinel
// topologies, so that what min-replicas-to-write buys is measured cell
// against cell: how long the old side kept granting, and the grants on
// each side.
func init() {
	Register(alone("it measures a race between Sentinel's promotion (about 1.3 s after the cut) and the old master's refusal under min-replicas (1 to 3 s after it), which another cell's load moves", onTopologies(scheduleScenario(nemesis.SentinelSplitBrain, checker.RiskBothSides,
		"on a Sentinel group, a second into the run, the master is cut off (alive) together with the holder and one more "+
			"client from the replicas, the sentinels and the other two clients, both ways, for 6 s; the majority side promotes "+
			"a replica and its clients are granted by it, while the old side's clients, which cannot reach a sentinel, keep "+
			"using the old master; every client contends throughout; the record shows when the replica was promoted and until "+
			"when the old master accepted writes (its own answers to the lab's probe), and the figures the grants on each side",
		nil), topology.SentinelTopologies...)))
}
