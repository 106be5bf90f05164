package nemesis

import (
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/quorum"
	"github.com/locklab/locklab/topology"
)

// Fixed schedules re-express scripted scenarios over the nemesis: the same
// fault kinds, inject and heal steps and history records that explore
// draws at random, landed at a failpoint instead of a random moment (or,
// for redlock-partition's two cuts, at set moments). The
// verdict matrix runs its client, server and partition cells as these
// (scenarios.scheduleScenario), and `bench explore -fixed NAME` runs one.
var Fixed = map[string]FixedSchedule{}

// FixedSchedule builds a fixed schedule for a lock, its lease time, and
// the liveness bound the checker will judge the run by (checker.Bound),
// which spaces its faults; the nemesis never computes the bound itself.
type FixedSchedule func(impl string, fencing bool, ttl, bound time.Duration) Schedule

func init() {
	for name, f := range fixedSchedules {
		fixedAs(name, f)
	}
}

// fixedAs registers f as the fixed schedule name, every schedule it
// builds named so.
func fixedAs(name string, f FixedSchedule) {
	Fixed[name] = func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		s := f(impl, fencing, ttl, bound)
		s.Name = name
		return s
	}
}

// promotionInSection is primary-failover's step with another promotion
// kind: it strikes while the holder is inside its section (see
// promotion.go for when the holder goes on).
func promotionInSection(kind string) FixedSchedule {
	return func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: kind, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection}, serverShape)
	}
}

var fixedSchedules = map[string]FixedSchedule{
	// pause-past-ttl: the holder is SIGSTOPped after reading the resource,
	// past its lease, then resumed to write.
	"pause-past-ttl": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientPause, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(pastTTL(ttl))})
	},
	// coupon: the coupon sale's pause, pause-past-ttl's fault observed a
	// second and a half after the heal, not one: the paused seller's stale
	// write sets the count of coupons sold back, and the others need the
	// time to sell again what it gave back (the sale itself is the
	// scenario's workload: engine's "coupon-sale").
	"coupon": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientPause, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(pastTTL(ttl))}, shape{observe: 1500 * time.Millisecond})
	},
	// holder-partition: the holder, having read the resource, is cut off
	// every lock server by dropped packets past its lease (the resource
	// stays reachable), then healed; it writes whenever its section ends.
	"holder-partition": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetPartitionClient, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(pastTTL(ttl))})
	},
	// holder-partition-long: holder-partition's cut, LongCut past a lease
	// longer: past the server's own limit on a silent client (a ZooKeeper
	// session, an etcd lease, a database's keep-alive as its topology
	// declares it), and long enough after it for another client to be
	// granted what the server freed while the holder still works.
	"holder-partition-long": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetPartitionClient, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(pastTTL(ttl) + LongCut)})
	},
	// holder-crash: the holder is SIGKILLed inside its critical section; a
	// new process takes its slot a TTL later.
	"holder-crash": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientKill, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(ttl)})
	},
	// crash-after-setnx: the client is SIGKILLed between the steps of its
	// acquire (right after a one-step acquire).
	"crash-after-setnx": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientKill, Target: "client-0",
			After: failpointOr(impl, failpoint.AfterSetNX, failpoint.AfterAcquire), Duration: Duration(ttl)})
	},
	// slow-work-past-ttl: the holder, alive, works in its section past its
	// lease (its renewals run on), then makes its checks and writes. It
	// stops in its work, before the checks: a Redlock client that checks
	// its validity time sees the time it took and does not write.
	"slow-work-past-ttl": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientSlowSection, Target: "client-0", After: failpoint.InWork,
			Duration: Duration(pastTTL(ttl))})
	},
	// late-release: the holder is SIGSTOPped just before it releases, past
	// its lease, then resumed to release a lock another client may hold.
	"late-release": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		// Long sections, so that the stale release lands while another
		// holder still works, until a TTL after the heal: the release lands
		// at the heal, inside the section of the holder then (at most a
		// third of a TTL), and a waiter is granted the freed lock within
		// it. Then short sections, for the checker's minimum progress (a
		// lock that holds through the pause grants nothing during it):
		// with long sections to the end, that took six seconds of
		// observing, 60 % of the run, for about 20 sections.
		return fixed(impl, fencing, ttl, Step{Kind: ClientPause, Target: "client-0",
			After: failpointOr(impl, failpoint.BetweenGetAndDel, failpoint.BeforeRelease), Duration: Duration(pastTTL(ttl))},
			shape{workMin: ttl / 5, workMax: ttl / 3, longFor: ttl, observe: ttl + time.Second})
	},
	// server-restart: the lock's first server is SIGKILLed and restarted
	// without its data while the holder is inside its section; the holder
	// writes after the others had time to take the lock from the empty
	// server.
	"server-restart": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerRestartEmpty, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection}, serverShape)
	},
	// server-pause: the lock's first server is SIGSTOPped past a lease while
	// the holder is inside its section, then resumed; the holder writes
	// after the others had time to take the lock.
	"server-pause": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerPause, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl))}, serverShape)
	},
	// leader-isolated: on an ensemble, whichever server leads when the
	// holder is inside its section is cut off every other host past a
	// lease (the rest keep a quorum and elect a new leader); the holder
	// writes after the others had time to take the lock.
	"leader-isolated": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetIsolate, Target: LeaderTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl))}, serverShape)
	},
	// holder-server-cut: on an ensemble, the holder is cut off the one
	// server its session is connected to, past a lease; that server stays
	// in the quorum and no election happens, so the holder's client may
	// reconnect to another member. Does the session move in time, or
	// expire while its holder still runs? (Isolating the holder's server
	// instead would mean an election whenever that server led, and the
	// verdict would turn on which server the client happened to pick.)
	"holder-server-cut": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetPartitionClient, Target: HolderServerTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl))}, serverShape)
	},
	// sentinel-master-split: on a Sentinel group, whichever server is the
	// master while the holder is inside its section is cut off, together
	// with the holder, from the replicas, the sentinels and the other
	// clients. The cut lasts a second past a lease's worth of pastTTL:
	// Sentinel calls the master down after 500 ms (cluster/sentinel.go),
	// then agrees, elects a leader and promotes a replica, which takes
	// about a second more, and the other clients need time on the new
	// master for a grant while the holder, on the old side, still writes.
	"sentinel-master-split": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetSplitWithHolder, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second)}, serverShape)
	},
	// sentinel-master-kill: on a Sentinel group, the master is SIGKILLed
	// while the holder is inside its section and restarted (empty: the
	// lab's Redis keeps nothing on disk) after as long as the split lasts,
	// so Sentinel fails over to a replica that may or may not have the
	// holder's grant.
	"sentinel-master-kill": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerKill, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second)}, serverShape)
	},
	// sentinel-split-at-grant: sentinel-master-split struck at the grant
	// instead of inside the section: the holder stops right after its
	// acquire's write (between the grant and a WAIT for replicas, where the
	// lock has one; right after the acquire otherwise) and the master is
	// cut off with it. The source documents' fail-over story: the master
	// granted, and the grant's fate is decided by the fail-over, not by
	// the holder. A lock that confirms its grant with the replicas after
	// the cut is healed finds them gone and gives it back.
	"sentinel-split-at-grant": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, splitAtGrant(impl, ttl), serverShape)
	},
	// sentinel-split-after-ack: sentinel-split-at-grant with the race its
	// WAIT lock lost in 2 of 13 runs made certain. The holder stops between
	// its grant and its WAIT; the nemesis waits until a replica has
	// acknowledged the master's offset as of the grant (REPLCONF ACK, about
	// once a second), and only then cuts the master off with the holder, as
	// sentinel-split-at-grant does. The cut drops packets without a word,
	// so the old master goes on counting that replica with its
	// acknowledgement. The holder goes on inside the cut, once another
	// client has read the resource from the promoted side: its WAIT is
	// answered by the old master from that count at once, and the grant is
	// confirmed after its lease ran out. It does not wait for the heal as
	// sentinel-split-at-grant's holder does: Sentinel re-points the
	// replicas about 1.3 s into the cut, each closes its link to the old
	// master, and the FIN, dropped, is sent again on TCP's backoff (0.2,
	// 0.6, 1.4, 3 s after the close); the one due about 3 s later arrives
	// within a tenth of a second of a 4 s cut's heal, and the old master,
	// reading it, drops that replica before the holder's WAIT reaches it in
	// some runs and not in others (seen with ss in three runs: two safe,
	// one unsafe). The run goes on a second longer than
	// sentinel-split-at-grant's, the most the wait for the acknowledgement
	// takes on a healthy group, so that as much of it is left after the
	// heal.
	"sentinel-split-after-ack": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		st := splitAtGrant(impl, ttl)
		st.Await, st.GoesOn = ReplicaAcked, InFault
		return fixed(impl, fencing, ttl, st, shape{clients: serverShape.clients, observe: 2 * time.Second})
	},
	// sentinel-kill-at-grant: sentinel-master-kill struck at the grant: the
	// holder stops between its acquire's write and its WAIT for replicas,
	// and the master is SIGKILLed (restarted, empty, as long as the split
	// lasts), so Sentinel promotes a replica. The source documents' other
	// fail-over story: the master dies right after granting. The holder
	// goes on after the heal, once another client has had the lock from
	// the promoted replica and the promoted master counts a replica
	// online (OnceReplicated); its WAIT must be asked of the master that
	// granted (gone now), not of whichever master its client reaches
	// then, whose replicas owe it nothing. Without the wait for a replica,
	// a holder that went on while the group was still pointing its
	// servers at the promoted master had its WAIT answered 0 there too,
	// and a lock that asks the wrong master gave its grant back as the
	// right one does (the mutant setnx-px-wait-other-connection came out
	// safe in 1 of 14 runs so, its history showing no replica online from
	// 2.9 s to 6.4 s into the fault and the holder's WAIT at 4.2 s).
	"sentinel-kill-at-grant": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerKill, Target: MasterTarget, Holder: "client-0",
			After: atGrant(impl), Duration: Duration(pastTTL(ttl) + time.Second), GoesOn: OnceReplicated}, serverShape)
	},
	// sentinel-master-pause: on a Sentinel group, the master is SIGSTOPped
	// while the holder is inside its section, as long as the split lasts
	// (past down-after: Sentinel promotes a replica), then SIGCONTed. It
	// wakes still believing it is the master, with its clients' connections
	// open, until the sentinels see it and make it a replica of the new one;
	// its keys' expiry ran on its wall clock while it slept.
	"sentinel-master-pause": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerPause, Target: MasterTarget, Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl) + time.Second)}, serverShape)
	},
	// sentinel-isolated: on a Sentinel group, one sentinel (sentinel-1, the
	// first the clients ask for the master) is cut off every other host
	// past a lease. One of three cannot reach the quorum of two that calls
	// the master down, nor a majority to lead a fail-over, so nothing may
	// change: the lock must stay safe and keep granting through the cut.
	"sentinel-isolated": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		s := fixed(impl, fencing, ttl, Step{At: Duration(Lead), Kind: NetIsolate, Target: IsolatedSentinel,
			Duration: Duration(pastTTL(ttl) + time.Second), Window: KeepsGranting})
		return s
	},
	// client-clock-skew: client-0's own clock runs three TTLs ahead of
	// the others' for six seconds. Sections are long (a fifth to a third
	// of the TTL) and everyone steps back a third of a TTL after each, so
	// the skewed client meets locks that others hold and judges their
	// expiry; six seconds of that is enough for the checker's minimum
	// progress. The skew reaches a lock only through its reads of the
	// client's clock: a lock that never reads it is n/a.
	"client-clock-skew": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		skew := 6 * time.Second
		return Schedule{Impl: impl, Fencing: fencing, TTL: Duration(ttl), Clients: 4, Seed: 1,
			WorkMin: Duration(ttl / 5), WorkMax: Duration(ttl / 3), Think: Duration(ttl / 3),
			Duration: Duration(skew + time.Second),
			Faults:   []Step{{Kind: ClientClockSkew, Target: "client-0", Duration: Duration(skew)}}}
	},
	// The three Redlock schedules cut the holder (client-0) off the nodes
	// beyond a bare majority for the whole run (standing proxy resets), so
	// its grant lands on exactly a quorum (Kleppmann's setting: "client 1
	// acquires the lock on nodes A, B, C; D and E are unreachable"), then
	// strike the last node of that majority while the holder is in its
	// section. The cut is the proxy's reset, not lost packets on hosts:
	// every client dials the proxy, never the node, and on the lab's hosts
	// the others' refused dials to a restarted node trip go-redis's dial
	// breaker (after PoolSize failures it probes once a second), so with a
	// one-second TTL nobody reached the restarted node before the holder's
	// keys expired and the run showed nothing about the restart.
	//
	// redlock-restart: that node restarts empty at once.
	"redlock-restart": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return bareMajority(impl, fencing, ttl, Step{Kind: ServerRestartEmpty})
	},
	// redlock-restart-delayed: that node crashes and restarts empty only
	// after the max TTL (antirez's delayed restart). No one can be granted
	// a majority meanwhile; the holder goes on inside the fault, within
	// its lease.
	"redlock-restart-delayed": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return bareMajority(impl, fencing, ttl, Step{Kind: ServerRestartEmpty,
			Duration: Duration(ttl*3/2 + 200*time.Millisecond), GoesOn: InLease})
	},
	// redlock-clock-jump: that node's clock jumps forward past the TTL
	// (its keys, the holder's among them, expire at once), and the holder
	// goes on inside the jump, once another client has read the resource
	// (or half a TTL passed); the jump holds a second more.
	"redlock-clock-jump": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return bareMajority(impl, fencing, ttl, Step{Kind: ServerClockJump,
			Duration: Duration(ttl/2 + time.Second), GoesOn: InLease})
	},
	// redis-failover: the single Redis master dies while the holder is in
	// its section, and its replica, whose replication was stalled before
	// the grant (so the grant is certainly lost), is promoted; the
	// clients' proxies move to it (replica-promote). Through the proxy, so
	// it runs in container mode too. redis-failover-replicated lets
	// replication run and is usually safe.
	"redis-failover": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ReplicaPromote, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection}, serverShape)
	},
	// redis-failover-replicated: the single Redis master dies while the
	// holder is inside its section; its replica is promoted and takes over
	// its address; the holder writes after the others had time to take the
	// lock from the new master. Unlike redis-failover (which runs in
	// container mode too: it stalls the replica before the grant and moves
	// its clients by proxy), replication runs freely, so the
	// grant is lost only if it had not reached the replica.
	"redis-failover-replicated": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: FailOver, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection}, serverShape)
	},
	// queued-waiter-crash and -pause: on a lock whose waiters queue on the
	// server, a waiter in line right behind the holder is SIGKILLed or
	// SIGSTOPped, and the holder releases half a TTL later (see
	// Step.Queue); the killed one's slot gets a new process, the paused
	// one resumes, past a lease.
	"queued-waiter-crash": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return queued(impl, fencing, ttl, ClientKill)
	},
	"queued-waiter-pause": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return queued(impl, fencing, ttl, ClientPause)
	},
	// queued-waiter-crash-in-section: the holder is stopped inside its
	// section and holds through the fault while the waiter right behind it
	// is SIGKILLed; the dead waiter's place goes (its session expires)
	// while the lock is still held, so the waiter behind it is told its
	// predecessor left and must look at the line again, not take the lock.
	"queued-waiter-crash-in-section": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientKill, Target: "client-0", Holder: "client-1", Queue: true,
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl))}, shape{observe: ttl + time.Second})
	},
	// redlock-partition: every client is cut off a minority of a multi-node
	// lock's servers (a quorum stays reachable: grants must go on), healed,
	// then off a majority (no quorum: no grant may come), healed. No
	// failpoint: the cuts strike whoever is where, as a partition does.
	"redlock-partition": func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		nodes := serverNames(impl)
		q := quorum.Majority(len(nodes))
		minority, majority := strings.Join(nodes[min(q, len(nodes)):], "+"), strings.Join(nodes[:min(q, len(nodes))], "+")
		cut := 2 * ttl
		second := Lead + cut + bound
		return Schedule{Impl: impl, Fencing: fencing, TTL: Duration(ttl), Clients: 4, Seed: 1,
			WorkMin: Duration(5 * time.Millisecond), WorkMax: Duration(20 * time.Millisecond),
			Duration: Duration(second + cut + time.Second),
			Faults: []Step{
				{At: Duration(Lead), Kind: NetPartitionNodes, Target: minority, Duration: Duration(cut), Window: KeepsGranting},
				{At: Duration(second), Kind: NetPartitionNodes, Target: majority, Duration: Duration(cut), Window: GrantsNothing},
			}}
	},
}

// bareMajority is a Redlock schedule: the holder, client-0, cut off the
// nodes beyond a bare majority for the whole run, and st striking the
// last node of that majority while the holder is in its section.
func bareMajority(impl string, fencing bool, ttl time.Duration, st Step) Schedule {
	nodes := serverNames(impl)
	q := quorum.Majority(len(nodes))
	st.Holder, st.After = "client-0", failpoint.InCriticalSection
	if q > 0 && q <= len(nodes) {
		st.Target = nodes[q-1]
	}
	s := fixed(impl, fencing, ttl, st)
	for _, n := range nodes[min(q, len(nodes)):] {
		s.Standing = append(s.Standing, Step{Kind: ProxyReset, Target: Link("client-0", n)})
	}
	return s
}

// splitAtGrant is the step of sentinel-split-at-grant: the master cut off
// with the holder, stopped right after its grant was written (between the
// grant and a WAIT for replicas, where the lock has one; after the PEXPIRE
// of a lock that sets its expiry apart), a second past a lease's worth of
// pastTTL, as sentinel-master-split.
func splitAtGrant(impl string, ttl time.Duration) Step {
	return Step{Kind: NetSplitWithHolder, Target: MasterTarget, Holder: "client-0",
		After: atGrant(impl), Duration: Duration(pastTTL(ttl) + time.Second)}
}

// queued is a queue step: client-1 holds and stops before its release,
// client-0 waits in line right behind it and is struck, clients 2 and 3
// wait behind that; the run goes on a TTL and a second past the heal, long
// enough for the checker's minimum progress from the live waiters alone.
func queued(impl string, fencing bool, ttl time.Duration, kind string) Schedule {
	return fixed(impl, fencing, ttl, Step{Kind: kind, Target: "client-0", Holder: "client-1", Queue: true,
		After: failpoint.BeforeRelease, Duration: Duration(pastTTL(ttl))}, shape{observe: ttl + time.Second})
}

// LongCut is how much longer than holder-partition's cut
// holder-partition-long's lasts: 8 s in all at the matrix's 1 s TTL.
// pg-keepalives' server gives a silent connection up 3 s after it last
// heard it (topology.PGSilence), mysql-wait-timeout's 1 s after its last
// command, up to a third of a TTL before the cut (a lock's watcher pings
// that often); the holder goes on a TTL before the heal (InCut), so
// another client has about 3.5 s to be granted the freed lock and act
// under it, with a second's margin for a loaded machine.
const LongCut = 5 * time.Second

// pastTTL is how long a pause or a cut lasts: well past the lease (or
// ZooKeeper session), as in the scripted scenarios.
func pastTTL(ttl time.Duration) time.Duration { return ttl*5/2 + 500*time.Millisecond }

// atGrant is where the Sentinel scenarios "at the grant" stop the holder:
// its grant written on the master, before a WAIT for replicas where the
// lock has one, else right after its acquire. One place, because a lock's
// point inside its acquire (redis-setnx-expire's after-setnx, before its
// expiry is set) is not a written grant.
func atGrant(impl string) string {
	return failpointOr(impl, failpoint.BeforeWait, failpoint.AfterAcquire)
}

// failpointOr is the lock's own failpoint if it declares one, else the
// generic fallback every client passes.
func failpointOr(impl, own, fallback string) string {
	if spec, err := impls.Lookup(impl); err == nil && slices.Contains(spec.Failpoints, own) {
		return own
	}
	return fallback
}

// serverNames names the lock servers cluster.Start gives impl's backend,
// in order (none for an unknown lock: Validate then says so).
func serverNames(impl string) []string {
	spec, err := impls.Lookup(impl)
	if err != nil {
		return nil
	}
	var out []string
	topo, _ := TopologyFor(spec, topology.SingleName, 1)
	for _, s := range topo.Servers {
		out = append(out, s.Name)
	}
	return out
}

// firstServer names the first of them ("" for a lock with none).
func firstServer(impl string) string {
	if names := serverNames(impl); len(names) > 0 {
		return names[0]
	}
	return ""
}

// FixedNames lists the fixed schedules, sorted.
func FixedNames() []string {
	var out []string
	for n := range Fixed {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// shape is how a fixed schedule's workload runs around its one fault.
// Zero fields take the scripted scenarios' defaults: four clients,
// sections of 5-20 ms (a few hundred of them in a run: enough to catch an
// overlap, few enough for a readable timeline), and one second of
// contention after the heal. The runner goes on past that until some
// client was granted the lock after the heal, or the liveness bound
// passed, so a short observation never hides a stuck lock.
type shape struct {
	clients          int
	workMin, workMax time.Duration
	// longFor: Schedule.LongFor.
	longFor time.Duration
	observe time.Duration
}

// ShortWorkMin and ShortWorkMax bound the short sections of the scripted
// scenarios: a few hundred of them in a run, enough to catch an overlap,
// few enough for a readable timeline.
const (
	ShortWorkMin = 5 * time.Millisecond
	ShortWorkMax = 20 * time.Millisecond
)

// serverShape is the shape of a fault on a server while a holder waits at
// its failpoint: two clients, the holder and the one the lost lock is
// granted to. The holder leaves after its stale section (see Step.Holder).
// With a third client, behind a plain DEL release, a later grant with a
// higher token could read before the second holder writes and get that
// colliding write refused, hiding the repeated fencing token in some runs
// and not others.
var serverShape = shape{clients: 2}

func fixed(impl string, fencing bool, ttl time.Duration, st Step, sh ...shape) Schedule {
	var s shape
	if len(sh) > 0 {
		s = sh[0]
	}
	if s.clients == 0 {
		s.clients = 4
	}
	if s.workMax == 0 {
		s.workMin, s.workMax = ShortWorkMin, ShortWorkMax
	}
	if s.observe == 0 {
		s.observe = time.Second
	}
	end := st.Heal() + s.observe
	if st.Holder != "" {
		// The holder goes on after the heal once another client has read
		// the resource, or half a TTL passed.
		end += ttl / 2
	}
	return Schedule{Impl: impl, Fencing: fencing, TTL: Duration(ttl), Clients: s.clients, Seed: 1,
		WorkMin: Duration(s.workMin), WorkMax: Duration(s.workMax), LongFor: Duration(s.longFor),
		Duration: Duration(end), Faults: []Step{st}}
}
