package scenarios

import (
	"errors"
	"github.com/locklab/locklab/checker"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// The Sentinel topology's cells: plain contention and a crashed holder
// (the same meaning as on one server, through the sentinels), and the
// fail-overs Sentinel itself decides: the master cut off with the holder
// on its side, and the master killed.
//
// Only the kill is judged by what the promotion lost
// (checker.RiskAtPromotion): the master is gone, so whether the holder's
// claim survived is whether the replica promoted had the master's writes,
// which the fault records from both servers' offsets. A split or a pause
// leaves the old master serving the holder's side, and the kill at the
// grant asks where the holder's WAIT goes after the fail-over, not what
// the promotion lost: those keep the strike's rule.
func init() {
	Register(onTopologies(scheduleScenario("sentinel-master-split", checker.RiskAtStrike,
		"on a Sentinel group, whichever server is the master while the holder is in its section is cut off, with the holder, "+
			"from the replicas, the sentinels and the other clients, past Sentinel's down-after time; a replica is promoted "+
			"and the others are granted by it while the holder writes on the old side",
		nil), topology.SentinelTopologies...))
	Register(onTopologies(scheduleScenario("sentinel-master-kill", checker.RiskAtPromotion,
		"on a Sentinel group, the master is SIGKILLed while the holder is in its section; Sentinel promotes a replica, "+
			"which has the holder's grant only if replication had carried it there",
		nil), topology.SentinelTopologies...))
	Register(onTopologies(scheduleScenario("sentinel-master-pause", checker.RiskAtStrike,
		"on a Sentinel group, the master is SIGSTOPped past Sentinel's down-after time while the holder is in its section; "+
			"a replica is promoted, and the old master wakes still believing it is the master until the sentinels demote it",
		nil), topology.SentinelTopologies...))
	Register(onTopologies(scheduleScenario("sentinel-split-at-grant", checker.RiskAtStrike,
		"on a Sentinel group, the master is cut off with the holder right after the holder's grant was written "+
			"(before a WAIT for replicas, where the lock has one), past down-after; a replica is promoted",
		nil), topology.SentinelTopologies...))
	// Only where a lock confirms its grant with the replicas: for any other
	// lock the kill at the grant is sentinel-master-kill again (the grant
	// stands or falls with replication alone), while for one that waits,
	// what it asks after the fail-over, and of which server, decides.
	Register(onTopologies(scheduleScenario("sentinel-kill-at-grant", checker.RiskAtStrike,
		"on a Sentinel group, the master is SIGKILLed right after the holder's grant was written, before its WAIT for "+
			"replicas; Sentinel promotes a replica, and the holder goes on once another client has had the lock from it",
		confirmsWithReplicas), topology.RedisSentinelName))
	// The race sentinel-split-at-grant leaves to luck, forced: the cut
	// comes only once a replica has acknowledged the grant, and the holder
	// asks for its confirmation inside the cut. Only where a lock confirms
	// its grant with the replicas: for any other the acknowledgement
	// answers nothing it asks, and a holder going on inside the cut is
	// sentinel-master-split's case. On both Sentinel topologies, as
	// min-replicas-to-write makes a cut-off master refuse writes, and
	// whether that reaches a WAIT (which is no write) is what the cell on
	// redis-sentinel-min-replicas shows.
	Register(onTopologies(scheduleScenario("sentinel-split-after-ack", checker.RiskAtStrike,
		"on a Sentinel group, the holder stops right after its grant was written, before its WAIT for replicas; once a "+
			"replica has acknowledged the grant, the master is cut off with the holder past down-after and a replica is promoted; "+
			"the holder goes on inside the cut, once another client has had the lock, and the old master, which still counts "+
			"that replica, answers its WAIT",
		confirmsWithReplicas), topology.SentinelTopologies...))
	Register(onTopologies(scheduleScenario("sentinel-isolated", checker.RiskAtStrike,
		"on a Sentinel group, one sentinel is cut off every other host past a lease; one of three can neither call the "+
			"master down nor lead a fail-over, so nothing may change: safe, and grants go on through the cut",
		nil), topology.SentinelTopologies...))
	for _, name := range []string{"contention", "holder-crash"} {
		extend(name, topology.SentinelTopologies...)
	}
}

// confirmsWithReplicas accepts a lock that waits for replicas to
// acknowledge its grant (impls.Backend.Replicas), the only kind a fault
// between the grant and that wait tells anything new about.
func confirmsWithReplicas(spec impls.Spec, _ bool) error {
	if !spec.Backend.Replicas {
		return errors.New("the lock does not confirm its grant with the replicas: a kill at the grant is sentinel-master-kill's case, " +
			"and a split after a replica's acknowledgement, with the holder going on inside it, sentinel-master-split's")
	}
	return nil
}
