package benchmark

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/quorum"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// A target is met only when its whole interval clears it; a median on
// the right side with an interval across the line is "within noise".
func TestTargetVerdict(t *testing.T) {
	six := func(v ...float64) record.Stat { return NewStat(v) }
	tests := []struct {
		name    string
		s       record.Stat
		want    float64
		atLeast bool
		verdict string
	}{
		{"clear above", six(1.6, 1.7, 1.65, 1.62, 1.68, 1.7), 1.5, true, "met"},
		{"median above, interval across", six(1.2, 1.7, 1.6, 1.55, 1.3, 1.8), 1.5, true, "met (within noise)"},
		{"clear below", six(1.0, 1.1, 1.05, 1.02, 1.08, 1.1), 1.5, true, "short"},
		{"median below, interval across", six(1.2, 1.6, 1.4, 1.3, 1.45, 1.55), 1.5, true, "short (within noise)"},
		{"at most, clear", six(0.1, 0.12, 0.11, 0.1, 0.13, 0.12), 0.25, false, "met"},
		{"too few trials for an interval", NewStat([]float64{1.6, 1.7}), 1.5, true, "met (within noise)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict(tt.s, tt.want, tt.atLeast); got != tt.verdict {
				t.Errorf("verdict = %q, want %q (stat %+v)", got, tt.verdict, tt.s)
			}
		})
	}
}

// testFloors: a PING round trip of 100 µs, ZooKeeper's of 250 µs, a
// wake-up hop of 150 µs, and fan-outs to 5 nodes at 4,000/s (every
// answer) and 6,000/s (3 answers).
func testFloors() floors {
	return floors{
		rt:    map[string]float64{"redis": 10_000, "zookeeper": 4_000},
		hopMS: 0.150, handOff: "redis", hopRequest: "RPUSH → BLPOP", fanAll: 4_000, fanMajority: 6_000, fanNodes: 5, fanQuorum: 3,
	}
}

// The ceiling of each kind of lock: a polling lock's contended pair pays
// the release's round trip, a wake-up lock's a hop for each grant to a
// waiter and the releaser's release and acquire for each grant back to it,
// a multi-node lock's round trips are fan-outs; a figure the run did not
// measure falls back to the old one-node formula.
func TestCeiling(t *testing.T) {
	one := lockShape{backend: "redis", nodes: 1}
	five := lockShape{backend: "redis", nodes: 5}
	wake := lockShape{backend: "redis", nodes: 1, wakeUp: true}
	regrab := lockShape{backend: "redis", nodes: 1, wakeUp: true, back: 0.4}
	zk := lockShape{backend: "zookeeper", wakeUp: true}
	withHop := func(ms float64) floors { f := testFloors(); f.hopMS = ms; return f }
	noFan := testFloors()
	noFan.fanAll, noFan.fanMajority = 0, 0
	tests := []struct {
		name       string
		workload   string
		shape      lockShape
		f          floors
		pairs      float64
		most       float64
		termsHaves []string
	}{
		{"one node, uncontended", Uncontended, one, testFloors(), 5_000, 5_000, []string{"10,000 round trips/s ÷ 2"}},
		{"one node polling, contended", Contended, one, testFloors(), 1 / 300e-6, 1 / 300e-6, []string{"1 release round trip"}},
		{"five nodes, uncontended", Uncontended, five, testFloors(), 2_000, 3_000,
			[]string{"4,000 fan-outs/s to 5 nodes, waiting for every answer, ÷ 2", "3,000 pairs/s for a lock returning at a majority (6,000 fan-outs/s to 3 of 5)"}},
		{"five nodes, contended", Contended, five, testFloors(), 1 / 450e-6, 1 / (200e-6 + 1.0/6_000),
			[]string{"1 release fan-out to every node", "2,727 pairs/s for a lock returning at a majority"}},
		{"five nodes, fan-out not measured", Uncontended, five, noFan, 5_000, 5_000, []string{"10,000 round trips/s ÷ 2"}},
		{"wake-up, contended: a hop", Contended, wake, testFloors(), 1 / 350e-6, 1 / 350e-6,
			[]string{"a wake-up hop (150 µs, RPUSH → BLPOP)", "2,857 pairs/s (3,333 if passing the lock on cost only the release's round trip"}},
		{"wake-up, hop dearer than 2 round trips: still a hop for a fair lock", Contended, wake, withHop(0.250), 1 / 450e-6, 1 / 450e-6,
			[]string{"a wake-up hop (250 µs, RPUSH → BLPOP) per pair"}},
		{"wake-up, 40% back to the releaser", Contended, regrab, testFloors(), 1 / 370e-6, 1 / 370e-6,
			[]string{"a wake-up hop (150 µs, RPUSH → BLPOP) for the 60% of grants that went to a waiter and 2 round trips (release, acquire) for the 40% back to the releaser, 170 µs on average"}},
		{"wake-up, hop not measured", Contended, wake, withHop(0), 1 / 300e-6, 1 / 300e-6, []string{"1 release round trip"}},
		{"wake-up, uncontended: no hand-off", Uncontended, wake, testFloors(), 5_000, 5_000, []string{"÷ 2"}},
		{"ZooKeeper wake-up: no ZooKeeper hop, polling formula", Contended, zk, testFloors(), 1 / (200e-6 + 250e-6), 1 / (200e-6 + 250e-6),
			[]string{"at 10,000 and 4,000 round trips/s"}},
		{"backend not measured", Contended, lockShape{backend: "postgres"}, testFloors(), 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ceiling(tt.workload, tt.shape, tt.f)
			if !near(c.pairs, tt.pairs) || !near(c.most, tt.most) {
				t.Errorf("ceiling = %v pairs/s (most %v), want %v (most %v)", c.pairs, c.most, tt.pairs, tt.most)
			}
			for _, want := range tt.termsHaves {
				if !strings.Contains(c.terms, want) {
					t.Errorf("terms %q lack %q", c.terms, want)
				}
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// The reach column: a target above the most generous ceiling is out of
// reach; one between a multi-node lock's every-node and majority ceilings
// is out of reach only for a lock that waits for every node.
func TestReach(t *testing.T) {
	fan := ceilingOf{pairs: 2_000, most: 3_000}
	flat := ceilingOf{pairs: 2_000, most: 2_000}
	tests := []struct {
		name       string
		need, peer float64
		c          ceilingOf
		want       string
	}{
		{"within both", 1_500, 1_000, fan, "needs 1,500 pairs/s of a ceiling of 2,000 (75%; 50% of the 3,000 returning at a majority)"},
		{"above every node, below majority", 2_500, 1_600, fan, "out of reach for a lock that waits for every node: needs 2,500 pairs/s, the ceiling is 2,000 (3,000, 83%, returning at a majority)"},
		{"above both", 3_500, 2_300, fan, "out of reach on this machine: needs 3,500 pairs/s, the ceiling is 3,000"},
		{"peer above the ceiling", 4_000, 3_100, fan, "no ceiling in this run: the peer's 3,100 pairs/s is above the 3,000"},
		{"one node, within", 1_000, 800, flat, "needs 1,000 pairs/s of a ceiling of 2,000 (50%)"},
		{"one node, above", 2_400, 1_600, flat, "out of reach on this machine: needs 2,400 pairs/s, the ceiling is 2,000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reach(tt.need, tt.peer, tt.c); !strings.HasPrefix(got, tt.want) {
				t.Errorf("reach = %q, want it to begin %q", got, tt.want)
			}
		})
	}
}

// The fair/peer bound is the fair lock's contended ceiling over the peer's
// measured pairs/s, and its sentence carries the figures it came from.
func TestFairBound(t *testing.T) {
	noHop := testFloors()
	noHop.hopMS = 0
	tests := []struct {
		name      string
		f         floors
		peerPairs float64
		bound     float64
		haves     []string
	}{
		{"measured", testFloors(), 2_000, (1 / 350e-6) / 2_000, []string{
			"as `peer-redislock` did with 95% of grants",
			"4 round trips per pair (release, acquire, 2 in the section), a ceiling of 2,500 pairs/s of which it did 2,000 (80%)",
			"at least a wake-up hop (150 µs, RPUSH → BLPOP) + 2 × 100 µs = 350 µs per pair, 2,857 pairs/s",
			"fair/peer ≤ 2,857 / 2,000 = 1.43× on this machine",
		}},
		{"a faster peer, a tighter bound", testFloors(), 2_500, (1 / 350e-6) / 2_500, []string{"of which it did 2,500 (100%)", "= 1.14×"}},
		{"no hop measured", noHop, 2_000, 0, nil},
		{"no peer figure", testFloors(), 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound, sentence := fairBound("peer-redislock", tt.peerPairs, 0.95, tt.f)
			if !near(bound, tt.bound) {
				t.Errorf("bound = %v, want %v", bound, tt.bound)
			}
			if tt.haves == nil && sentence != "" {
				t.Errorf("sentence %q, want none", sentence)
			}
			for _, want := range tt.haves {
				if !strings.Contains(sentence, want) {
					t.Errorf("sentence %q lacks %q", sentence, want)
				}
			}
			// One place for the floor: the bound is the fair lock's ceiling
			// over the peer's pairs/s.
			if tt.bound > 0 {
				c := ceiling(Contended, lockShape{backend: "redis", nodes: 1, wakeUp: true}, tt.f)
				if !near(bound*tt.peerPairs, c.pairs) {
					t.Errorf("bound × peer = %v, the fair lock's ceiling is %v", bound*tt.peerPairs, c.pairs)
				}
			}
		})
	}
}

// The hand-off target's floor is a bare wake-up hop in PING round trips of
// the same trial.
func TestHandoffReach(t *testing.T) {
	six := func(v float64) []float64 { return []float64{v, v, v, v, v, v} }
	tests := []struct {
		name    string
		hopMS   []float64
		ping    []float64 // one-client round trips/s per trial
		verdict string
	}{
		{"floor below the target", six(0.120), six(10_000), "floor: a bare wake-up hop (RPUSH → BLPOP) is 1.2 round trips"},
		{"floor above the target", six(0.240), six(10_000), "out of reach on this machine: a bare wake-up hop (RPUSH → BLPOP) is 2.4 round trips"},
		// A slow trial's hop over its own slow PING is still 2.4 round
		// trips; over the fastest trial's it would be 7.2.
		{"trials of two speeds", []float64{0.240, 0.720, 0.240, 0.720, 0.240, 0.720}, []float64{10_000, 3_333.4, 10_000, 3_333.4, 10_000, 3_333.4}, "out of reach on this machine: a bare wake-up hop (RPUSH → BLPOP) is 2.4"},
		{"no hop measured", nil, six(10_000), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := handoffReach(NewStat(perRoundTrip(tt.hopMS, tt.ping)), "RPUSH → BLPOP", fairMaxHandoffRTs)
			if (tt.verdict == "") != (got == "") || !strings.HasPrefix(got, tt.verdict) {
				t.Errorf("handoffReach = %q, want it to begin %q", got, tt.verdict)
			}
		})
	}
}

// The targets use the Redis floors: the fair lock's rows get the hop (the
// hand-off row its floor, the contended row the bound), the Redlock rows
// the fan-out; a report without them (an older bench.json) keeps the
// one-node formulas.
func TestTargetsUseRedisFloors(t *testing.T) {
	six := func(v float64) record.Stat { return NewStat([]float64{v, v, v, v, v, v}) }
	redis := record.Limit{Backend: "redis", Request: "PING", OneClient: six(10_000), Clients: 8, NClients: six(40_000),
		WakeUp: &record.WakeUpLimit{Request: "RPUSH → BLPOP", HopMS: six(0.240)},
		FanOut: &record.FanOutLimit{Request: "PING", Nodes: 5, Majority: 3, AllPerSec: six(4_000), MajorityPerSec: six(6_000)}}
	con := func(pairs, share, handoffMS float64) *record.ContendedR {
		return &record.ContendedR{PairsPerSec: six(pairs), SameClientShare: six(share), HandoffP50: six(handoffMS), Jain: six(1)}
	}
	unc := func(pairs float64) *record.UncontendedR { return &record.UncontendedR{PairsPerSec: six(pairs)} }
	rep := &record.Bench{Settings: record.BenchSetting{TTLMS: 2000}, Limits: []record.Limit{redis}, Impls: []record.BenchResult{
		{Name: "redis-fair", Backend: "redis", Caps: "fencing, no-polling, expiry", RedisNodes: 1, Contended: con(2_000, 0, 0.25)},
		{Name: "peer-redislock", Peer: true, Backend: "redis", RedisNodes: 1, Contended: con(2_000, 0.95, 0.3)},
		{Name: "redlock", Backend: "redis", RedisNodes: 5, Uncontended: unc(1_000), Contended: con(900, 0.9, 1)},
		{Name: "peer-redsync-5", Peer: true, Backend: "redis", RedisNodes: 5, Uncontended: unc(1_000), Contended: con(900, 0.9, 1)},
	}}
	byName := func(t *testing.T, rep *record.Bench, name, impl string) record.Target {
		t.Helper()
		for _, tg := range judgeTargets(rep) {
			if tg.Name == name && tg.Impl == impl {
				return tg
			}
		}
		t.Fatalf("no target %q for %s", name, impl)
		return record.Target{}
	}
	t.Run("with the floors", func(t *testing.T) {
		fair := byName(t, rep, "fair Redis lock, contended", "redis-fair")
		if !strings.Contains(fair.Note, "a wake-up hop (240 µs") || !strings.Contains(fair.Note, "fair/peer ≤ 2,273 / 2,000 = 1.14× on this machine") {
			t.Errorf("fair contended note: %q", fair.Note)
		}
		if !strings.HasPrefix(fair.Reach, "out of reach on this machine: needs 3,000 pairs/s, the ceiling is 2,273") {
			t.Errorf("fair contended reach: %q", fair.Reach)
		}
		hand := byName(t, rep, "fair: hand-off p50 in Redis round trips", "redis-fair")
		if !strings.HasPrefix(hand.Reach, "out of reach on this machine: a bare wake-up hop (RPUSH → BLPOP) is 2.4 round trips") {
			t.Errorf("hand-off reach: %q", hand.Reach)
		}
		unc := byName(t, rep, "redlock, uncontended", "redlock")
		if !strings.Contains(unc.Note, "4,000 fan-outs/s to 5 nodes") ||
			!strings.HasPrefix(unc.Reach, "needs 1,500 pairs/s of a ceiling of 2,000 (75%; 50% of the 3,000 returning at a majority)") {
			t.Errorf("redlock uncontended: reach %q, note %q", unc.Reach, unc.Note)
		}
	})
	t.Run("an older report without them", func(t *testing.T) {
		old := *rep
		r := redis
		r.WakeUp, r.FanOut = nil, nil
		old.Limits = []record.Limit{r}
		fair := byName(t, &old, "fair Redis lock, contended", "redis-fair")
		if strings.Contains(fair.Note, "fair/peer") || !strings.Contains(fair.Note, "1 release round trip") {
			t.Errorf("fair contended note without a hop: %q", fair.Note)
		}
		if hand := byName(t, &old, "fair: hand-off p50 in Redis round trips", "redis-fair"); hand.Reach != "" {
			t.Errorf("hand-off reach without a hop: %q", hand.Reach)
		}
		unc := byName(t, &old, "redlock, uncontended", "redlock")
		if !strings.Contains(unc.Note, "10,000 round trips/s ÷ 2") {
			t.Errorf("redlock uncontended note without a fan-out: %q", unc.Note)
		}
	})
	var b strings.Builder
	limitSection(rep, func(format string, args ...any) { fmt.Fprintf(&b, format, args...) })
	for _, want := range []string{
		"| wake-up hop (`RPUSH → BLPOP`) | 240 µs | 240 µs | 2.40 | 2.40 |",
		"| fan-out to 5 nodes, every answer, per second | 4,000 | 4,000 | 2.50 | 2.50 |",
		"| fan-out to 5 nodes, 3 answers, per second | 6,000 | 6,000 | 1.67 | 1.67 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the physical-limit section lacks %q:\n%s", want, b.String())
		}
	}
}

// The Redis floors are measured against real servers: five lock nodes, as
// the multi-node locks use. The hop's ping-pong ends on its stop token and
// leaves no list behind; a node that does not answer makes the fan-out an
// error naming it, never a figure. Timings are not asserted.
func TestRedisFloorsAgainstServers(t *testing.T) {
	ctx := context.Background()
	topo, err := cluster.Start(ctx, topology.Of(topology.RedisNodes(5)), cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	opts := Defaults(true)
	b := &bench{opts: opts, topo: topo, runID: "floors"}
	ep := topo.Endpoints()[topology.Redis]
	d := 100 * time.Millisecond

	hop, err := b.wakeUpHop(ctx, ep, "RPUSH → BLPOP", d)
	if err != nil {
		t.Fatalf("wake-up hop: %v", err)
	}
	if hop <= 0 || math.IsInf(hop, 0) || math.IsNaN(hop) {
		t.Errorf("wake-up hop = %v ms, want a positive figure", hop)
	}
	rdb := redis.NewClient(&redis.Options{Addr: topo.Endpoints().Addrs(topology.Redis)[0]})
	defer rdb.Close()
	if left, err := rdb.Keys(ctx, "*-hop-*").Result(); err != nil || len(left) > 0 {
		t.Errorf("the ping-pong left lists behind: %v (%v)", left, err)
	}

	all, err := b.fanOut(ctx, ep.Addrs, 5, d)
	if err != nil {
		t.Fatalf("fan-out to every node: %v", err)
	}
	maj, err := b.fanOut(ctx, ep.Addrs, quorum.Majority(5), d)
	if err != nil {
		t.Fatalf("fan-out to a majority: %v", err)
	}
	if all <= 0 || maj <= 0 {
		t.Errorf("fan-outs/s: every node %v, majority %v; want positive figures", all, maj)
	}

	if err := topo.Lock(topology.Redis)[4].Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.fanOut(ctx, ep.Addrs, quorum.Majority(5), d); err == nil || !strings.Contains(err.Error(), topo.Endpoints().Addrs(topology.Redis)[4]) {
		t.Errorf("fan-out with a dead node: err %v, want one naming %s", err, topo.Endpoints().Addrs(topology.Redis)[4])
	}
}
