package benchmark

import (
	"fmt"
	"math"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// The performance targets of issue 12, judged on the run's own figures:
// each as a ratio of one lock to its peer, per trial (both were measured in
// the same trial, minutes apart at most), so a slow minute of the machine
// cancels out, and summarised like every other figure, with its interval.

// ratioTarget is a target "impl >= want x peer" on one workload.
type ratioTarget struct {
	name, impl, peer, workload string
	want                       float64
}

// issueTargets are the issue's ratio targets; rows whose locks are not in
// the run are left out. "every lock of ours >= 1.0x its closest peer
// uncontended" is added per lock in targets().
var issueTargets = []ratioTarget{
	{"fair Redis lock, contended", "redis-fair", "peer-redislock", Contended, 1.5},
	{"zookeeper, contended", "zookeeper", "peer-zk-lock", Contended, 1.2},
	{"zookeeper, uncontended", "zookeeper", "peer-zk-lock", Uncontended, 1.0},
	{"redlock, uncontended", "redlock", "peer-redsync-5", Uncontended, 1.5},
	{"redlock, contended", "redlock", "peer-redsync-5", Contended, 1.5},
	{"reentrant, contended", "redis-reentrant", "peer-redislock", Contended, 0.8},
}

// The fair lock's own targets: with Clients clients, at most 2/8 of grants
// back to the releaser, Jain's index >= 0.99, longest wait <= 10x the median.
const (
	fairLock          = "redis-fair"
	fairMaxSameShare  = 2.0 / 8
	fairMinJain       = 0.99
	fairMaxWaitFactor = 10.0
	fairMaxHandoffRTs = 1.5
)

// pairsStat returns a lock's pairs/s on a workload.
func pairsStat(r *record.BenchResult, workload string) record.Stat {
	switch {
	case workload == Uncontended && r.Uncontended != nil:
		return r.Uncontended.PairsPerSec
	case workload == Contended && r.Contended != nil:
		return r.Contended.PairsPerSec
	}
	return record.Stat{}
}

// pairsOf returns a lock's per-trial pairs/s on a workload.
func pairsOf(r *record.BenchResult, workload string) []float64 {
	return pairsStat(r, workload).Trials
}

// trialRatios divides trial by trial.
func trialRatios(a, b []float64) []float64 {
	var out []float64
	for i := 0; i < len(a) && i < len(b); i++ {
		if b[i] > 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

// verdict compares a figure's interval with a bound; atLeast says which
// side passes.
func verdict(s record.Stat, want float64, atLeast bool) string {
	pass := func(v float64) bool {
		if atLeast {
			return v >= want
		}
		return v <= want
	}
	clear := s.CILo != nil && s.CIHi != nil && pass(*s.CILo) && pass(*s.CIHi)
	none := s.CILo != nil && s.CIHi != nil && !pass(*s.CILo) && !pass(*s.CIHi)
	switch {
	case pass(s.Median) && clear:
		return "met"
	case pass(s.Median):
		return "met (within noise)"
	case none:
		return "short"
	}
	return "short (within noise)"
}

// targets judges every target the run can judge.
func judgeTargets(rep *record.Bench) []record.Target {
	byName := map[string]*record.BenchResult{}
	for i := range rep.Impls {
		byName[rep.Impls[i].Name] = &rep.Impls[i]
	}
	fl := floorsOf(rep.Limits)
	var out []record.Target
	add := func(t ratioTarget) {
		a, p := byName[t.impl], byName[t.peer]
		if a == nil || p == nil {
			return
		}
		rs := trialRatios(pairsOf(a, t.workload), pairsOf(p, t.workload))
		if len(rs) == 0 {
			return
		}
		tg := record.Target{Name: t.name, Impl: t.impl, Peer: t.peer, Workload: t.workload, Want: t.want, Ratio: NewStat(rs)}
		tg.Met = verdict(tg.Ratio, t.want, true)
		peerMedian := NewStat(pairsOf(p, t.workload)).Median
		need := t.want * peerMedian
		if c := ceiling(t.workload, shapeOf(*a), fl); c.pairs > 0 {
			tg.Note = c.terms
			tg.Reach = reach(need, peerMedian, c)
		}
		if t.impl == fairLock && t.workload == Contended && p.Contended != nil {
			if _, sentence := fairBound(t.peer, peerMedian, p.Contended.SameClientShare.Median, fl); sentence != "" {
				tg.Note = joinNote(tg.Note, sentence)
			}
		}
		if t.workload == Contended && a.Contended != nil && p.Contended != nil &&
			a.Contended.CostPerAcquisition != nil && p.Contended.CostPerAcquisition != nil {
			tg.Note = joinNote(tg.Note, fmt.Sprintf("%s per acquisition: %s against %s", a.Contended.CostUnit,
				fmtNum(a.Contended.CostPerAcquisition.Median), fmtNum(p.Contended.CostPerAcquisition.Median)))
		}
		out = append(out, tg)
	}
	for _, t := range issueTargets {
		add(t)
	}
	for i := range rep.Impls {
		r := &rep.Impls[i]
		if r.Peer || r.Broken != "" || r.ClosestPeer == "" {
			continue
		}
		add(ratioTarget{name: "ours ≥ closest peer, uncontended", impl: r.Name, peer: r.ClosestPeer, workload: Uncontended, want: 1.0})
	}
	if f := byName[fairLock]; f != nil && f.Contended != nil {
		c := f.Contended
		out = append(out,
			absTarget("fair: share back to releaser", c.SameClientShare, fairMaxSameShare, false, ""),
			absTarget("fair: Jain's index", c.Jain, fairMinJain, true, ""))
		var ratios []float64
		for i := 0; i < len(c.WaitMax.Trials) && i < len(c.WaitP50.Trials); i++ {
			if c.WaitP50.Trials[i] > 0 {
				ratios = append(ratios, c.WaitMax.Trials[i]/c.WaitP50.Trials[i])
			}
		}
		if len(ratios) > 0 {
			out = append(out, absTarget("fair: longest wait / median wait", NewStat(ratios), fairMaxWaitFactor, false, ""))
		}
		// The fair lock's own backend's limit: its hand-off in that
		// backend's round trips.
		if lr := limitOf(rep.Limits, f.Backend); lr != nil {
			// Trial by trial, like the ratio targets: a hand-off is divided by
			// the round trip of its own trial, not of the fastest one, since
			// on a machine whose PING swings several-fold between trials a
			// slow trial's hand-off over a fast trial's round trip measures
			// the swing, not the lock.
			ping := lr.OneClient.Trials
			rts := perRoundTrip(c.HandoffP50.Trials, ping)
			if len(rts) > 0 {
				tg := absTarget("fair: hand-off p50 in Redis round trips", NewStat(rts), fairMaxHandoffRTs, false,
					fmt.Sprintf("one round trip: %.3f ms (PING, one client, median of the trials)", 1000/NewStat(ping).Median))
				if w := lr.WakeUp; w != nil {
					tg.Reach = handoffReach(NewStat(perRoundTrip(w.HopMS.Trials, ping)), w.Request, fairMaxHandoffRTs)
				}
				out = append(out, tg)
			}
		}
		if f.Recovery != nil && f.Recovery.Seconds != nil {
			st := NewStat([]float64{*f.Recovery.Seconds})
			out = append(out, absTarget("fair: recovery after a killed holder, s", st, rep.Settings.TTLMS/1000, false, "one run; bound: the TTL"))
		}
	}
	return out
}

func absTarget(name string, s record.Stat, want float64, atLeast bool, note string) record.Target {
	return record.Target{Name: name, Impl: fairLock, Workload: Contended, Want: want, AtMost: !atLeast, Ratio: s, Met: verdict(s, want, atLeast), Note: note}
}

// floors are the run's physical figures a bound or a ceiling is built
// from, each at its fastest trial: load from elsewhere only ever slows a
// request down, so the fastest trial is the closest to the servers' limit.
type floors struct {
	rt    map[string]float64 // one-client round trips/s, by backend
	hopMS float64            // wake-up hop, ms (0: not measured)
	// handOff is the backend whose limit measured the wake-up hop and the
	// fan-out (a kind that has them: Redis), hopRequest names the hop.
	handOff, hopRequest string
	// fanAll and fanMajority are fan-outs/s to fanNodes Redis lock nodes,
	// waiting for every answer or for fanQuorum of them (0: not measured).
	fanAll, fanMajority float64
	fanNodes, fanQuorum int
}

func floorsOf(limits []record.Limit) floors {
	f := floors{rt: map[string]float64{}}
	for _, l := range limits {
		f.rt[l.Backend] = l.OneClient.Max
	}
	l := handOffLimit(limits)
	if l == nil {
		return f
	}
	f.handOff = l.Backend
	if w := l.WakeUp; w != nil && w.HopMS.Min > 0 {
		f.hopMS, f.hopRequest = w.HopMS.Min, w.Request
	}
	if fo := l.FanOut; fo != nil && fo.AllPerSec.Max > 0 && fo.MajorityPerSec.Max > 0 {
		f.fanAll, f.fanMajority = fo.AllPerSec.Max, fo.MajorityPerSec.Max
		f.fanNodes, f.fanQuorum = fo.Nodes, fo.Majority
	}
	return f
}

// lockShape is what a bound or a ceiling needs to know of a lock.
type lockShape struct {
	backend string
	nodes   int  // Redis lock nodes; a lock on several sends to all at once
	wakeUp  bool // waiters sleep until notified (Caps.NoPolling)
	// back is the share of contended grants that went back to the client
	// that had just released (median over the trials; 0 when not measured).
	back float64
}

func shapeOf(r record.BenchResult) lockShape {
	s := lockShape{backend: r.Backend, nodes: r.RedisNodes, wakeUp: wakesWaiters(r)}
	if r.Contended != nil {
		s.back = r.Contended.SameClientShare.Median
	}
	return s
}

// wakesWaiters reports a lock whose waiters sleep until a notification
// (Caps.NoPolling) rather than polling.
func wakesWaiters(r record.BenchResult) bool { return strings.Contains(r.Caps, "no-polling") }

// fansOut reports a lock on several Redis nodes whose fan-out the run
// measured: its round trip is a fan-out, not one node's PING.
func (f floors) fansOut(s lockShape) bool {
	return s.backend == f.handOff && s.nodes > 1 && f.fanAll > 0 && f.fanMajority > 0
}

// roundTrip is the rate of one round trip of a lock of shape s: one
// request to its backend, or for a lock on several Redis nodes a fan-out
// to all of them waiting for every answer. The lab cannot tell whether a
// lock returns at a majority instead, so bounds take the every-node rate
// and ceilings show the majority's beside it. 0 when not measured.
func (f floors) roundTrip(s lockShape) float64 {
	if f.fansOut(s) {
		return f.fanAll
	}
	return f.rt[s.backend]
}

// handoff is the least a contended wake-up lock's pair spends, on
// average, between one holder's release and the next holder's grant, in
// seconds, and what it is. A sleeping waiter learns of its grant only from
// a push, a hop after the release begins; a grant back to the releaser
// costs the release and the releaser's next acquire, two round trips. The
// lock's own share of grants back to the releaser weighs the two, rather
// than the cheaper of them: a fair lock never gives the lock back, so it
// pays the hop even where two PINGs cost less (on a quiet machine they do).
// A polling lock has no such floor: a waiter's attempt may already be on
// its way when the release lands, so the release's round trip is all a
// pair must spend, and ceiling keeps that for it. ok is false when the run
// did not measure the hop, or the lock is not a one-node Redis wake-up lock
// (the lab measures no ZooKeeper or PostgreSQL wake-up).
func (f floors) handoff(s lockShape) (sec float64, what string, ok bool) {
	be := f.rt[s.backend]
	if !s.wakeUp || s.backend != f.handOff || s.nodes > 1 || f.hopMS <= 0 || be <= 0 {
		return 0, "", false
	}
	hop, again := f.hopMS/1000, 2/be
	back := min(max(s.back, 0), 1)
	sec = (1-back)*hop + back*again
	what = fmt.Sprintf("a wake-up hop (%s, %s)", fmtSec(hop), f.hopRequest)
	if back >= 0.005 {
		what = fmt.Sprintf("%s for the %s of grants that went to a waiter and 2 round trips (release, acquire) for the %s back to the releaser, %s on average",
			what, fmtPct(1-back), fmtPct(back), fmtSec(sec))
	}
	return sec, what, true
}

// ceilingOf is the fastest a lock of some shape could go on this machine.
type ceilingOf struct {
	// pairs is the ceiling; for a lock on several nodes, of one that
	// waits for every node.
	pairs float64
	// most is the most any lock of the shape could do: for several nodes,
	// one that returns at a majority; else pairs.
	most  float64
	terms string
}

// ceiling is the fastest any lock of shape s could go on this machine,
// from the round-trip rates measured in the run. Uncontended: an acquire
// and a release, one round trip each. Contended, every pair still costs
// the critical section's two round trips to the resource (a Redis server)
// and what passing the lock on costs: one release round trip for a polling
// lock (the next holder may have learned of its grant for free), a hand-off
// for a wake-up lock (see handoff). A lock on several Redis nodes does
// each round trip as a fan-out: its ceiling is for one that waits for
// every node (the lab cannot tell which a lock does), and most says what
// returning at a majority would allow.
func ceiling(workload string, s lockShape, f floors) ceilingOf {
	be := f.roundTrip(s)
	if be <= 0 {
		return ceilingOf{}
	}
	fan := f.fansOut(s)
	switch workload {
	case Uncontended:
		if fan {
			return ceilingOf{pairs: f.fanAll / 2, most: f.fanMajority / 2, terms: fmt.Sprintf(
				"ceiling: %s fan-outs/s to %d nodes, waiting for every answer, ÷ 2 (one to acquire, one to release); %s pairs/s for a lock returning at a majority (%s fan-outs/s to %d of %d)",
				fmtNum(f.fanAll), f.fanNodes, fmtNum(f.fanMajority/2), fmtNum(f.fanMajority), f.fanQuorum, f.fanNodes)}
		}
		return ceilingOf{pairs: be / 2, most: be / 2, terms: fmt.Sprintf("ceiling: %s round trips/s ÷ 2 (one to acquire, one to release)", fmtNum(be))}
	case Contended:
		res := f.rt[resourceBackend]
		if res <= 0 {
			return ceilingOf{}
		}
		if fan {
			c := 1 / (2/res + 1/f.fanAll)
			most := 1 / (2/res + 1/f.fanMajority)
			return ceilingOf{pairs: c, most: most, terms: fmt.Sprintf(
				"ceiling: 2 resource round trips + 1 release fan-out to every node per pair, at %s round trips/s and %s fan-outs/s; %s pairs/s for a lock returning at a majority",
				fmtNum(res), fmtNum(f.fanAll), fmtNum(most))}
		}
		polling := 1 / (2/res + 1/be)
		if sec, what, ok := f.handoff(s); ok {
			// Both are shown: the polling locks' ceiling is what the lock
			// would reach if passing it on were free, and the gap between
			// the two is the price of waking a waiter on this machine.
			c := 1 / (2/res + sec)
			return ceilingOf{pairs: c, most: c, terms: fmt.Sprintf(
				"ceiling: 2 resource round trips + %s per pair, at %s round trips/s: %s pairs/s (%s if passing the lock on cost only the release's round trip, as for a polling lock)",
				what, fmtNum(res), fmtNum(c), fmtNum(polling))}
		}
		return ceilingOf{pairs: polling, most: polling, terms: fmt.Sprintf(
			"ceiling: 2 resource round trips + 1 release round trip per pair, at %s and %s round trips/s", fmtNum(res), fmtNum(be))}
	}
	return ceilingOf{}
}

// reach compares what a ratio target needs (need pairs/s of the lock, the
// peer having done peer) with the ceiling.
func reach(need, peer float64, c ceilingOf) string {
	switch {
	case peer > c.most:
		// The limit was measured at other moments than the pairs; on a
		// loaded machine it can come out below what a lock did.
		return fmt.Sprintf("no ceiling in this run: the peer's %s pairs/s is above the %s computed from the measured round trips", fmtNum(peer), fmtNum(c.most))
	case need > c.most:
		return fmt.Sprintf("out of reach on this machine: needs %s pairs/s, the ceiling is %s", fmtNum(need), fmtNum(c.most))
	case need > c.pairs:
		return fmt.Sprintf("out of reach for a lock that waits for every node: needs %s pairs/s, the ceiling is %s (%s, %s, returning at a majority)",
			fmtNum(need), fmtNum(c.pairs), fmtNum(c.most), fmtPct(need/c.most))
	case c.most > c.pairs:
		return fmt.Sprintf("needs %s pairs/s of a ceiling of %s (%s; %s of the %s returning at a majority)",
			fmtNum(need), fmtNum(c.pairs), fmtPct(need/c.pairs), fmtPct(need/c.most), fmtNum(c.most))
	}
	return fmt.Sprintf("needs %s pairs/s of a ceiling of %s (%s)", fmtNum(need), fmtNum(c.pairs), fmtPct(need/c.pairs))
}

// fairBound bounds the fair lock's contended ratio to a peer that gives
// the lock back to its releaser (back is the share of grants it did):
// such a lock pays 4 round trips per pair (release, acquire and the
// section's 2), a perfect fair lock a hand-off and the section's 2, so the
// fair lock can beat the peer by at most the peer's measured time per pair
// over the fair lock's floor. The sentence is built from the run's
// figures; "" when the run lacks one.
func fairBound(peer string, peerPairs, back float64, f floors) (float64, string) {
	fair := lockShape{backend: f.handOff, nodes: 1, wakeUp: true, back: 0}
	sec, what, ok := f.handoff(fair)
	// The lock server and the resource are both Redis servers: one PING
	// rate prices all four of the peer's round trips.
	rt := f.rt[f.handOff]
	if !ok || rt <= 0 || peerPairs <= 0 {
		return 0, ""
	}
	four := rt / 4
	floor := sec + 2/rt
	bound := 1 / floor / peerPairs
	return bound, fmt.Sprintf("bound: a lock that gives the lock back to its releaser, as `%s` did with %s of grants, pays 4 round trips per pair (release, acquire, 2 in the section), a ceiling of %s pairs/s of which it did %s (%s); "+
		"a perfect fair lock pays at least %s + 2 × %s = %s per pair, %s pairs/s; so fair/peer ≤ %s / %s = %.2f× on this machine",
		peer, fmtPct(back), fmtNum(four), fmtNum(peerPairs), fmtPct(peerPairs/four),
		what, fmtSec(1/rt), fmtSec(floor), fmtNum(1/floor), fmtNum(1/floor), fmtNum(peerPairs), bound)
}

// handOffLimit is the run's limit of the backend whose kind has a wake-up
// hop or a fan-out (cluster.WakeUpHopper, cluster.FanOuter: Redis), nil if
// it measured none. A backend of another topology merged into the report
// ("redis @ redis-sentinel", record.Bench.Append) names no kind.
func handOffLimit(limits []record.Limit) *record.Limit {
	for i := range limits {
		if hasHandOffLimits(limits[i].Backend) {
			return &limits[i]
		}
	}
	return nil
}

// hasHandOffLimits reports a backend whose kind has a wake-up hop or a
// fan-out to measure.
func hasHandOffLimits(be string) bool {
	k, err := cluster.KindOf(topology.Kind(be))
	if err != nil {
		return false
	}
	_, hop := k.(cluster.WakeUpHopper)
	_, fan := k.(cluster.FanOuter)
	return hop || fan
}

// limitOf is the run's limit of backend be, nil if it measured none.
func limitOf(limits []record.Limit, be string) *record.Limit {
	for i := range limits {
		if limits[i].Backend == be {
			return &limits[i]
		}
	}
	return nil
}

// resourceBackend is the backend of the protected resource's server (a
// role in every topology, topology.ResourceNode): the critical section's
// two round trips go there.
var resourceBackend = string(topology.ResourceNode().Kind)

// perRoundTrip expresses per-trial durations in ms as round trips of the
// same trial, given its one-client round trips/s.
func perRoundTrip(ms, perSec []float64) []float64 {
	var out []float64
	for i := 0; i < len(ms) && i < len(perSec); i++ {
		if ms[i] > 0 && perSec[i] > 0 {
			out = append(out, ms[i]*perSec[i]/1000)
		}
	}
	return out
}

// handoffReach says whether a hand-off of want round trips is physically
// possible: a bare wake-up hop, each trial's over the same trial's PING
// round trip (as the measured figure is), is its floor. Out of reach when
// the hop's whole interval lies above want, as a target is met only when
// the whole interval clears it.
func handoffReach(hop record.Stat, request string, want float64) string {
	if len(hop.Trials) == 0 {
		return ""
	}
	terms := fmt.Sprintf("a bare wake-up hop (%s) is %s round trips (median of the trials, each over its own PING)", request, fmtStat(hop))
	switch verdict(hop, want, false) {
	case "short":
		return "out of reach on this machine: " + terms
	case "short (within noise)":
		return "likely out of reach on this machine: " + terms
	}
	return fmt.Sprintf("floor: %s, %s of the %.2f allowed", terms, fmtPct(hop.Median/want), want)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// fmtWant prints a target's bound.
func wantText(t record.Target) string {
	op := "≥"
	if t.AtMost {
		op = "≤"
	}
	if t.Peer != "" {
		return fmt.Sprintf("%s %.1f× `%s`", op, t.Want, t.Peer)
	}
	if math.Abs(t.Want-math.Round(t.Want)) < 1e-9 {
		return fmt.Sprintf("%s %.0f", op, t.Want)
	}
	return fmt.Sprintf("%s %.2f", op, t.Want)
}
