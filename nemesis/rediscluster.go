package nemesis

import (
	"time"

	"github.com/locklab/locklab/faults/failpoint"
)

// A Redis Cluster's own fail-overs as fixed schedules. On a cluster every
// master masters some slots, so MasterTarget there is the master of the
// lock key's slot when the fault strikes (the engine asks the members,
// cluster.Topology.MasterOf), and the history records which member it was.
// The faults are the Sentinel group's (sentinel-master-split and -kill),
// aimed the same way and lasting as long, so the two topologies' verdicts
// and fail-over times stand side by side.
var redisClusterSchedules = map[string]FixedSchedule{
	// cluster-master-split: the lock key's slot master is cut off, together
	// with the holder inside its section, from the other members (the
	// other masters and every replica, its own too) and the other clients.
	// The cut lasts a second past a lease's worth of pastTTL: the majority
	// flags the master after the 500 ms node timeout (cluster/rediscluster.go)
	// and its replica is promoted 0.5 to 1 s later; the old master, in a
	// minority, refuses commands (CLUSTERDOWN) after one node timeout; the
	// other clients need time on the new master for a grant while the holder,
	// on the old side, still works.
	"cluster-master-split": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetSplitWithHolder, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second)}, serverShape)
	},
	// cluster-master-kill: the lock key's slot master is SIGKILLed while the
	// holder is inside its section, and restarted without its data (its
	// cluster config kept, so it rejoins as its former replica's replica)
	// after as long as the split lasts; the cluster promotes the replica,
	// which has the holder's grant only if replication had carried it there.
	"cluster-master-kill": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerKill, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second)}, serverShape)
	},
}

// The cluster's schedules join the table before fixed.go's init builds
// Fixed from it (package variables are set before any init runs).
var _ = joinFixed(redisClusterSchedules)

func joinFixed(m map[string]FixedSchedule) bool {
	for name, f := range m {
		if _, dup := fixedSchedules[name]; dup {
			panic("nemesis: duplicate fixed schedule " + name)
		}
		fixedSchedules[name] = f
	}
	return true
}
