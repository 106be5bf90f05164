package scenarios

import (
	"slices"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/topology"
)

// Cell is one implementation on one topology under one scenario, with or
// without fencing.
type Cell struct {
	Impl     impls.Spec
	Topology string // a topology.Named's name; empty is the single one
	// Profile names the timeouts the cell runs with (topology.Profile);
	// empty is the fast one.
	Profile  string
	Scenario string
	Fencing  bool
}

// Name identifies the cell, e.g. "redis-setnx-px/pause-past-ttl/fenced",
// "zookeeper@zk-ensemble/leader-isolated" off the single topology, and
// "zookeeper@zk-ensemble/leader-isolated~production" under a profile other
// than the fast one (so a fast cell keeps the name, and the shard, it
// always had).
func (c Cell) Name() string {
	n := c.Impl.Name
	if t := topology.Or(c.Topology); t != topology.SingleName {
		n += "@" + t
	}
	n += "/" + c.Scenario
	if c.Fencing {
		n += "/fenced"
	}
	if p := topology.OrFast(c.Profile); p != topology.FastName {
		n += ProfileSep + p
	}
	return n
}

// ProfileSep joins a cell's name and its profile when that is not the
// fast one.
const ProfileSep = "~"

// Expect is the cell's row in the reviewed expectation table: the row for
// its profile when the table has one, else the default row.
func (c Cell) Expect() (Expectation, error) {
	return ExpectedUnder(c.Profile, c.Impl.Name, c.Topology, c.Scenario, c.Fencing)
}

// Cells lists every applicable cell of specs × topologies × scenario
// names: each scenario on each topology it runs on that carries the lock,
// without fencing, and with fencing where the lock issues tokens (the
// contention run has no stale writer, so fencing changes nothing there and
// is left out).
func Cells(specs []impls.Spec, names []string) ([]Cell, error) {
	var out []Cell
	for _, spec := range specs {
		for _, t := range topology.All() {
			for _, name := range names {
				s, err := Lookup(name)
				if err != nil {
					return nil, err
				}
				for _, fencing := range []bool{false, true} {
					if fencing && (!spec.Caps.Fencing || name == "contention") {
						continue
					}
					if s.Demo || s.AppliesOn(spec, t.Name, fencing) != nil {
						continue
					}
					out = append(out, Cell{Impl: spec, Topology: t.Name, Scenario: name, Fencing: fencing})
				}
			}
		}
	}
	return out, nil
}

// UnderProfiles returns cells once under each profile named, in the
// profiles' order (the fast one's cells keep their places, and so their
// seeds): under a profile that runs some cells only
// (topology.Profile.Runs), those, and never the contention run, which has
// no fault and so no timeout to race. An unknown profile is an error.
func UnderProfiles(cells []Cell, profiles []string) ([]Cell, error) {
	var out []Cell
	for _, name := range profiles {
		p, err := topology.LookupProfile(name)
		if err != nil {
			return nil, err
		}
		for _, c := range cells {
			if p.Name == topology.FastName {
				c.Profile = ""
				out = append(out, c)
				continue
			}
			if !p.RunsCell(c.Topology, c.Scenario) || c.Scenario == "contention" {
				continue
			}
			c.Profile = p.Name
			out = append(out, c)
		}
	}
	return out, nil
}

// Brief keeps what make test runs of the matrix: every cell on the single
// topology but those leftOfSingle leaves (of a guest, only its
// holder-crash cell: the SIGKILL of the worker must take the guest library
// with it, and the guest's conformance run covers the rest of make test's
// share), and each other topology
// briefly, as briefPlans says. `bench matrix` runs them all: a cell off the
// single topology takes a dozen seconds or more, some of them alone
// (topology.Named.Alone), and the other locks' cells there repeat what
// the single topology shows of them.
func Brief(cells []Cell) []Cell {
	var out []Cell
	seen := map[string]bool{}
	for _, c := range cells {
		t := topology.Or(c.Topology)
		if t == topology.SingleName {
			if c.Impl.Guest && (c.Scenario != "holder-crash" || c.Fencing) {
				continue
			}
			if leftOfSingle(c, seen) {
				continue
			}
			if _, once := onceOnSingle[c.Scenario]; once {
				if c.Fencing || c.Impl.Peer || c.Impl.Broken != "" || seen["once|"+c.Scenario] {
					continue
				}
				seen["once|"+c.Scenario] = true
			}
			out = append(out, c)
			continue
		}
		plan := briefPlans[t]
		if slices.Contains(plan.Cells, c.Name()) {
			out = append(out, c)
			continue
		}
		if c.Fencing || c.Impl.Peer || c.Impl.Broken != "" || seen[t+"|"+c.Scenario] || !plan.runs(c.Scenario) {
			continue
		}
		seen[t+"|"+c.Scenario] = true // the first correct lock of ours only
		out = append(out, c)
	}
	return out
}

// onceOnSingle are the single topology's scenarios make test runs once,
// for the first correct lock of ours that has the cell, unfenced, each
// with why: a fault long enough to wait out a server's own limit costs its
// length in every cell, and the others repeat what that one shows of it.
var onceOnSingle = map[string]string{
	"holder-partition-long": "an 8 s cut and a run of about 13 s per cell; make matrix runs the ZooKeeper and etcd locks' cells, each a repeat of holder-partition's verdict with the session or lease surely gone",
}

// leftOfSingle says whether make test leaves a single-topology cell to
// make matrix because its expected verdict adds nothing make test does not
// already show:
//   - a cell the table expects n/a (the fault never reached the lock: a
//     clock skew the lock never reads), but for the first of its scenario,
//     which keeps the judgement that says n/a under test;
//   - a broken lock's cell the table expects safe, but for contention:
//     where the broken lock is meant to break, make test still asserts the
//     checker catches it, and where it works as the correct lock beside it
//     does, the correct lock's cell already runs the same code path;
//   - a queue scenario's cell (queueScenarios) but for the first lock of
//     each server kind: what holds up the line is the server's (a session
//     that outlives its waiter, a lock manager's queue), and twelve locks
//     declare a queue, thirty-six cells of which make test keeps one per
//     kind and scenario, within its time (make matrix runs them all).
//
// seen records the scenarios whose first n/a cell was kept, and the queue
// scenarios' kinds whose first cell was.
func leftOfSingle(c Cell, seen map[string]bool) bool {
	exp, err := c.Expect()
	if err != nil {
		return false // kept, so the cell's run reports the missing row
	}
	switch {
	case !checker.Applicable(exp.Verdict):
		if seen["n/a|"+c.Scenario] {
			return true
		}
		seen["n/a|"+c.Scenario] = true
	case c.Impl.Broken != "" && checker.Survived(exp.Verdict) && c.Scenario != "contention":
		return true
	case queueScenarios[c.Scenario]:
		key := "queue|" + c.Scenario + "|" + string(c.Impl.Backend.Kind)
		if seen[key] {
			return true
		}
		seen[key] = true
	}
	return false
}

// briefPlan is make test's share of one topology other than the single
// one. By default it is the unfenced holder-crash cell and those of the
// scenarios only that kind of topology has (which do not run on the single
// one), each for the first correct lock of ours that has the cell (cells
// come ours first). Contention is not among them: every faulted cell runs
// the same contention before and after its fault, and a cell off the
// single topology runs alone for ten seconds and more.
type briefPlan struct {
	// Only narrows the default to these scenarios: a topology that is
	// another one plus a setting needs one fault to show it starts and
	// bites, not every fault again.
	Only []string
	// Also adds scenarios that run on the single topology too: on a
	// topology that differs from it only by server settings, the cells
	// those settings change.
	Also []string
	// Leave takes scenarios out of the default, each with why.
	Leave map[string]string
	// Cells are whole cells run besides the default ones, of any lock.
	Cells []string
}

// runs says whether the plan's default runs the scenario.
func (p briefPlan) runs(scenario string) bool {
	if _, left := p.Leave[scenario]; left {
		return false
	}
	if p.Only != nil {
		return slices.Contains(p.Only, scenario)
	}
	if scenario == "holder-crash" || slices.Contains(p.Also, scenario) {
		return true
	}
	s, err := Lookup(scenario)
	return err == nil && !s.RunsOn(topology.SingleName)
}

// briefPlans is make test's share of each topology other than the single
// one; a topology not named here gets the default.
var briefPlans = map[string]briefPlan{
	// The MySQL replica topologies: one promotion, which starts the
	// primary and its replica, settles, promotes and moves the address
	// (the first correct lock's, unsafe: its row lock is never in the
	// binary log); on the semi-synchronous one, only the cell its
	// acknowledgement decides, the lock table's row kept by the promoted
	// replica. Contention there repeats the single topology's through the
	// primary.
	topology.MySQLReplicaAsyncName: {Only: []string{nemesis.PrimaryFailover}},
	topology.MySQLReplicaSemisyncName: {
		Only:  []string{},
		Cells: []string{"mysql-lock-table@mysql-replica-semisync/primary-failover"},
	},
	// The two-replica database topologies: the acknowledging replica
	// lost with the primary, one cell for the fault, on PostgreSQL: the
	// lock whose verdict it changes (stuck on pg-replica-sync, the
	// acknowledged row lost here). MariaDB's cells repeat the shape
	// (make matrix runs them) and each would add a promotion's run time.
	topology.PGReplicaSync2Name: {
		Only:  []string{},
		Cells: []string{"pg-unique-insert@" + topology.PGReplicaSync2Name + "/" + nemesis.PrimaryAckedStandbyLost},
	},
	topology.MySQLReplicaSemisync2Name: {Only: []string{}},
	topology.ZKEnsembleName: {
		// The leader's isolation is run fenced instead: unfenced, its
		// verdict turns on a race the lab does not decide (see Leave), and
		// fenced it still starts the ensemble, finds and cuts the leader,
		// waits out the election and must come out safe whichever way the
		// race went.
		Leave: map[string]string{
			"leader-isolated": "unfenced, the holder's session is expired in about 1 run in 3 (1 of 3 for each ZooKeeper lock in the committed ensemble matrix, and 0 of 3 in a make test on CI): it turns on whether go-zookeeper's reconnect loop, which sleeps a second after trying every member, reaches the new leader within the session's 1 s after the election; three runs miss it too often for make test",
		},
		Cells: []string{"zookeeper@zk-ensemble/leader-isolated/fenced"},
	},
	topology.EtcdClusterName: {
		// A cell whose verdict is not yet certain run to run would fail
		// make test by chance, not by a change.
		Leave: map[string]string{
			"leader-isolated": "about 1 run in 10 is stuck, for etcd-lock and for etcd's own Mutex alike (issue 32; see the expectation rows): etcd's client round-robins the waiter's request to the cut member, which holds it until it has rejoined the cluster, 0.7 to 5 s after the heal, sometimes past the 5 s bound",
		},
	},
	topology.RedisSentinelName: {
		Leave: map[string]string{
			"sentinel-split-at-grant":  "the first lock's verdict there repeats sentinel-master-split's, and the WAIT lock's is not the same run to run (a WAIT answered by an acknowledgement from before the cut confirms a grant whose lease ran out while its holder was stopped)",
			"holder-crash":             "a crashed client touches no server: the lease's expiry is the single topology's holder-crash, and Sentinel's own faults follow here",
			nemesis.MasterKillUnderLag: "unfenced, the lost grant repeats sentinel-master-kill's verdict (unsafe); the fenced cell below is the one the lag changes",
			// The two scenarios only the WAIT locks have: their cells for
			// redis-setnx-px-wait are below; redis-setnx-px-wait-all's
			// would take the default's place and add its run time.
			"sentinel-kill-at-grant":   "redis-setnx-px-wait's cell below is the mutants' catcher; redis-setnx-px-wait-all's gives its grant back the same way",
			"sentinel-split-after-ack": "redis-setnx-px-wait's cell below is the stale acknowledgement's; redis-setnx-px-wait-all's asks for two and is given back",
			nemesis.SentinelAckedReplicaLost: "the first lock's cell repeats master-kill-under-lag's loss (it confirms nothing with a replica); " +
				"the WAIT lock's cell below is the one the lost acknowledgement decides",
			nemesis.SentinelRejoiningReplicaPromoted: "its loss is sentinel-acked-replica-lost's for every lock but redis-setnx-px-wait-all " +
				"(which the acknowledged-replica cell cannot reach); make test keeps to one cell of the two faults, and make matrix runs the rest",
		},
		// The WAIT lock, unfenced, with no fault and where its WAIT decides:
		// the kill at its grant (its mutants' catcher) and the split once a
		// replica acknowledged it (the stale acknowledgement that confirms
		// a lapsed grant, which sentinel-split-at-grant shows only by luck);
		// both scenarios apply to that lock alone.
		Cells: []string{
			"redis-setnx-px-wait@redis-sentinel/contention",
			"redis-setnx-px-wait@redis-sentinel/sentinel-kill-at-grant",
			"redis-setnx-px-wait@redis-sentinel/sentinel-split-after-ack",
			// The fail-over under replication lag, fenced: the promoted
			// replica lacks the holder's fencing increment and issues its
			// token again (unsafe, where sentinel-master-kill is safe).
			"redis-setnx-px@redis-sentinel/" + nemesis.MasterKillUnderLag + "/fenced",
			// The acknowledging replica lost with the master: the WAIT
			// lock's confirmed grant is lost with it (unsafe), about 10 s.
			"redis-setnx-px-wait@redis-sentinel/" + nemesis.SentinelAckedReplicaLost,
		},
	},
	topology.PGReplicaAsyncName: {
		Leave: map[string]string{
			nemesis.PromotionUnderLag: "the first lock's verdict (pg-advisory, unsafe) is primary-failover's whatever the lag: its lock is never in the WAL; make matrix runs the cells the lag decides",
			nemesis.PrimarySplitBrain: "the first lock's (pg-advisory) runs turn on whether a majority client's waiter, queued on the old primary at the cut, is granted there and holds the old side off for the whole split (safe) or not (unsafe); the cell below does not",
		},
		// The split brain's one make test cell: both primaries grant a
		// lease of their own (unsafe in every run so far).
		Cells: []string{"pg-optimistic@pg-replica-async/" + nemesis.PrimarySplitBrain},
	},
	topology.PGReplicaSyncName: {
		Leave: map[string]string{
			nemesis.PrimarySplitBrain: "make test runs one cell of the split brain, pg-replica-async's; make matrix runs the cells the synchronous standby decides",
		},
	},
	topology.RedisClusterName: {
		Leave: map[string]string{
			nemesis.MasterKillUnderLag: "the fenced cell on redis-sentinel runs the same lag and kill; the cluster differs only in who promotes the replica",
		},
	},
	topology.RedisSentinelMinReplicasName: {Only: []string{"sentinel-master-split"}},
	// The stalled holder's session idles past the timeout: unsafe for the
	// session-bound locks, where the single topology says safe.
	topology.PGIdleTimeoutsName:   {Only: []string{"pause-past-ttl"}},
	topology.MySQLWaitTimeoutName: {Only: []string{"pause-past-ttl"}},
}
