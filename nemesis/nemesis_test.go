package nemesis

import (
	"context"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/topology"
)

// testBound is a liveness bound for a one-second TTL, as the checker
// would give it (3 TTLs and 2 s); the nemesis only spaces faults by it.
const testBound = 5 * time.Second

func plan(t *testing.T, impl string, seed int64, d time.Duration) Plan {
	t.Helper()
	spec, err := impls.Lookup(impl)
	if err != nil {
		t.Fatal(err)
	}
	topo, _ := TopologyFor(spec, topology.SingleName, 4)
	ks, _, err := Applicable(spec, topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Plan{Seed: seed, Impl: impl, TTL: time.Second, Bound: testBound, Clients: 4, Duration: d, Topology: topo, Kinds: ks}
}

func TestGenerateIsDeterministic(t *testing.T) {
	tests := []struct {
		impl string
		seed int64
		d    time.Duration
	}{
		{"redis-setnx-px", 1, 2 * time.Minute},
		{"redis-setnx-px", 42, 30 * time.Second},
		{"zookeeper", 7, 2 * time.Minute},
		{"pg-advisory", 7, 2 * time.Minute},
		{"redlock", 99, time.Minute},
		{"none", 3, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.impl, func(t *testing.T) {
			p := plan(t, tc.impl, tc.seed, tc.d)
			a, b := Generate(p), Generate(p)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("same seed, different schedules:\n%+v\n%+v", a, b)
			}
			if len(a.Faults) == 0 {
				t.Fatalf("no faults in %v", tc.d)
			}
			if err := a.Validate(); err != nil {
				t.Fatalf("generated schedule is invalid: %v", err)
			}
			bound := p.Bound
			for i := 1; i < len(a.Faults); i++ {
				if gap := time.Duration(a.Faults[i].At) - a.Faults[i-1].Heal(); gap < bound {
					t.Errorf("fault %d starts %v after the last heal, less than the liveness bound %v", i, gap, bound)
				}
			}
			if last := a.Faults[len(a.Faults)-1].Heal(); last+bound > tc.d {
				t.Errorf("last heal at %v leaves less than %v before the end %v", last, bound, tc.d)
			}
			// Half the faults that can strike a client aim at the holder:
			// over a long schedule, some do and some do not.
			aimed, clients := 0, 0
			for _, st := range a.Faults {
				k, _ := Lookup(st.Kind)
				if strikesClients(k.Targets(p.Topology)) {
					clients++
					if st.Target == HolderTarget {
						aimed++
					}
				}
			}
			if clients >= 8 && (aimed == 0 || aimed == clients) {
				t.Errorf("%d of %d faults that can strike a client aim at the holder; want some, not all", aimed, clients)
			}
			p.Seed++
			if c := Generate(p); reflect.DeepEqual(a.Faults, c.Faults) {
				t.Errorf("seeds %d and %d drew the same schedule", tc.seed, p.Seed)
			}
		})
	}
}

// TestGenerateFailOver: a fail-over is drawn only when asked for by name,
// and then always as the last fault, whatever the seed. Without hosts the
// fail-over does not apply, and the test says so.
func TestGenerateFailOver(t *testing.T) {
	spec, err := impls.Lookup("redis-setnx-px")
	if err != nil {
		t.Fatal(err)
	}
	asked := []string{ClientPause, FailOver}
	topo, _ := ExploreTopology(spec, topology.SingleName, 4, asked)
	if topo.NoHosts != "" {
		t.Skip(topo.NoHosts)
	}
	if plain, _ := ExploreTopology(spec, topology.SingleName, 4, nil); plain.Replica {
		t.Error("the default mix starts a replica")
	}
	ks, skipped, err := Applicable(spec, topo, asked)
	if err != nil || len(ks) != 2 {
		t.Fatalf("applicable %v, skipped %v, err %v; want both kinds", ks, skipped, err)
	}
	drawn := 0
	for seed := int64(1); seed <= 40; seed++ {
		s := Generate(Plan{Seed: seed, Impl: spec.Name, TTL: time.Second, Bound: testBound, Clients: 4, Duration: 2 * time.Minute, Topology: topo, Kinds: ks})
		if err := s.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for i, st := range s.Faults {
			if st.Kind == FailOver {
				drawn++
				if i != len(s.Faults)-1 {
					t.Errorf("seed %d: fail-over is fault %d of %d", seed, i, len(s.Faults))
				}
			}
		}
	}
	if drawn == 0 {
		t.Error("40 seeds drew no fail-over")
	}
}

// randomKinds is every kind a random schedule can draw: all but those that
// strike only at a failpoint.
func randomKinds() []string {
	// A split of a Sentinel group's master with the holder applies on that
	// topology only, and a promotion on a topology that declares a replica;
	// a replication lag needs a master with replicas (lag_test.go), the
	// acknowledged replica lost a Sentinel group (acked_replica_test.go),
	// and so does a split brain with clients (split_brain_test.go); these
	// tables are the single one's.
	return slices.DeleteFunc(Names(), func(n string) bool {
		return n == ClientSlowSection || n == NetSplitWithHolder || n == PrimaryPromotion ||
			n == ReplicationLag || n == LaggingMasterKill || n == LaggingPromotion ||
			n == AckedReplicaLost || n == RejoiningReplicaPromoted || n == SplitBrainWithClients ||
			n == AckedStandbyLost || // a second database replica (acked_standby_test.go)
			n == PrimarySplitWithClients
	})
}

// TestApplicable: on every server backend, each kind applies or says
// why not. The table is what a machine with the lab's hosts gives; where
// the backend has no hosts (container mode, or no root), every kind that
// needs them is skipped for the backend's own reason (Topology.NoHosts),
// whatever else would have kept it out.
func TestApplicable(t *testing.T) {
	tests := []struct {
		impl    string
		want    []string
		skipped map[string]string // kind -> part of the reason
	}{
		{"local-mutex", nil, map[string]string{ClientKill: "share one process", ServerPause: "no lock server"}},
		{"none", []string{ClientClockSkew, ClientKill, ClientPause}, map[string]string{ServerKill: "no lock server", ProxyReset: "no lock server"}},
		// A plain topology has no replica: the generator never draws a fail-over.
		{"redis-setnx-px", slices.DeleteFunc(randomKinds(), func(n string) bool {
			return n == FailOver || n == ReplicaPromote || n == NetPartitionNodes || n == ServerEndsSession
		}),
			map[string]string{FailOver: "no replica", ReplicaPromote: "no replica", NetPartitionNodes: "fewer than 3", ClientSlowSection: "failpoint", ServerEndsSession: "cannot end a Redis session"}},
		{"zookeeper", slices.DeleteFunc(randomKinds(), func(n string) bool {
			return n == ServerClockJump || n == FailOver || n == ReplicaPromote || n == NetPartitionNodes || n == ServerEndsSession
		}),
			map[string]string{ServerClockJump: "only Redis", FailOver: "single Redis", ReplicaPromote: "single Redis", ServerEndsSession: "cannot end a ZooKeeper session"}},
		// Five independent nodes: a cut of some of them is a kind of its own.
		{"redlock", slices.DeleteFunc(randomKinds(), func(n string) bool { return n == FailOver || n == ReplicaPromote || n == ServerEndsSession }),
			map[string]string{FailOver: "single Redis", ReplicaPromote: "single Redis"}},
		// A database's sessions can be ended under a live client.
		{"mysql-get-lock", slices.DeleteFunc(randomKinds(), func(n string) bool {
			return n == ServerClockJump || n == FailOver || n == ReplicaPromote || n == NetPartitionNodes
		}),
			map[string]string{ServerClockJump: "only Redis", FailOver: "single Redis", ReplicaPromote: "single Redis"}},
	}
	for _, backend := range []string{"local", "containers"} {
		for _, tc := range tests {
			t.Run(backend+"/"+tc.impl, func(t *testing.T) {
				t.Setenv("LOCKLAB_SERVERS", backend)
				spec, _ := impls.Lookup(tc.impl)
				topo, _ := TopologyFor(spec, topology.SingleName, 4)
				if backend == "containers" && topo.NoHosts == "" {
					t.Fatal("container mode gives the lab's hosts")
				}
				want, skipped := slices.Clone(tc.want), maps.Clone(tc.skipped)
				if topo.NoHosts != "" {
					// No kind that needs hosts applies, and each says the
					// backend's reason, not one a machine with hosts gives.
					want = slices.DeleteFunc(want, NeedsHosts)
					for _, k := range Names() {
						// A network kind asks for hosts before anything
						// else; a fail-over first asks for a single Redis.
						single := spec.Backend.Kind == topology.Redis && spec.Backend.Need().Count() == 1 && !spec.Backend.InProcess
						if IsNetwork(k) || (k == FailOver && single) {
							skipped[k] = topo.NoHosts
						}
					}
					// A server in a container sees each client's own
					// address and port (cluster's publishedOn), so a
					// client's sessions are found there too: it stays.
				}
				ks, got, err := Applicable(spec, topo, nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, k := range ks {
					names = append(names, k.Name())
				}
				slices.Sort(want)
				if !slices.Equal(names, want) {
					t.Errorf("kinds %v, want %v", names, want)
				}
				for k, why := range skipped {
					if !strings.Contains(got[k], why) {
						t.Errorf("%s skipped for %q, want a reason containing %q", k, got[k], why)
					}
				}
			})
		}
	}
}

func TestValidate(t *testing.T) {
	// Validity of a schedule, not of this run's servers: judged as in local mode,
	// where hosts exist (container mode has none, and says so).
	t.Setenv("LOCKLAB_SERVERS", "local")
	ok := Schedule{Impl: "redis-setnx-px", TTL: Duration(time.Second), Clients: 4, Duration: Duration(20 * time.Second),
		Faults: []Step{{At: Duration(time.Second), Kind: ClientPause, Target: "client-1", Duration: Duration(time.Second)}}}
	edit := func(f func(*Schedule)) Schedule {
		s := ok
		s.Faults = slices.Clone(ok.Faults)
		f(&s)
		return s
	}
	tests := []struct {
		name string
		s    Schedule
		want string // "" means valid
	}{
		{"valid", ok, ""},
		{"unknown impl", edit(func(s *Schedule) { s.Impl = "nope" }), "nope"},
		{"unknown kind", edit(func(s *Schedule) { s.Faults[0].Kind = "meteor" }), "unknown fault kind"},
		{"bad target", edit(func(s *Schedule) { s.Faults[0].Target = "client-9" }), "cannot strike"},
		{"not applicable", edit(func(s *Schedule) { s.Impl = "none"; s.Faults[0].Kind = ServerPause }), "does not apply"},
		{"overlap", edit(func(s *Schedule) { s.Faults = append(s.Faults, s.Faults[0]) }), "do not overlap"},
		{"past the end", edit(func(s *Schedule) { s.Duration = Duration(time.Second) }), "after the run ends"},
		{"fencing without tokens", edit(func(s *Schedule) { s.Impl = "none"; s.Fencing = true }), "fencing"},
		{"holder without failpoint", edit(func(s *Schedule) { s.Faults[0].Holder = "client-0" }), "names none"},
		{"holder on a client fault", edit(func(s *Schedule) {
			s.Faults[0].At, s.Faults[0].After, s.Faults[0].Holder = 0, "in-critical-section", "client-0"
		}), "a holder is for faults on servers"},
		{"holder struck itself", edit(func(s *Schedule) {
			s.Faults[0] = Step{Kind: ClientKill, Target: "client-0", After: "in-critical-section", Holder: "client-0", Duration: Duration(time.Second)}
		}), "name no holder"},
		{"holder not a client", edit(func(s *Schedule) {
			s.Faults[0] = Step{Kind: ServerPause, Target: "redis-1", After: "in-critical-section", Holder: "redis-1", Duration: Duration(time.Second)}
		}), "stops a client"},
		{"queue", edit(func(s *Schedule) {
			s.Faults[0] = Step{Kind: ClientKill, Target: "client-0", Holder: "client-1", After: "before-release", Queue: true, Duration: Duration(time.Second)}
		}), ""},
		{"queue without a holder", edit(func(s *Schedule) {
			s.Faults[0] = Step{Kind: ClientKill, Target: "client-0", Queue: true, Duration: Duration(time.Second)}
		}), "needs a holder"},
		{"queue strikes the holder", edit(func(s *Schedule) {
			s.Faults[0] = Step{Kind: ClientPause, Target: "client-1", Holder: "client-1", After: "before-release", Queue: true, Duration: Duration(time.Second)}
		}), "other than the holder"},
		{"queue with a server fault", edit(func(s *Schedule) {
			s.Faults[0] = Step{Kind: ServerPause, Target: "redis-1", Holder: "client-1", After: "before-release", Queue: true, Duration: Duration(time.Second)}
		}), "kills or pauses a waiter"},
		{"aimed at the holder", edit(func(s *Schedule) { s.Faults[0].Target = HolderTarget }), ""},
		{"holder of a server fault", edit(func(s *Schedule) {
			s.Faults[0].Kind, s.Faults[0].Target = ServerPause, HolderTarget
		}), "cannot strike"},
		{"holder at a failpoint", edit(func(s *Schedule) {
			s.Faults[0].At, s.Faults[0].After, s.Faults[0].Target = 0, "in-critical-section", HolderTarget
		}), "names the client it stops"},
		{"fail-over", edit(func(s *Schedule) {
			s.Faults = append(s.Faults, Step{At: Duration(3 * time.Second), Kind: FailOver, Target: "redis-1"})
		}), ""},
		{"fail-over not last", edit(func(s *Schedule) {
			s.Faults = []Step{{At: Duration(time.Second), Kind: FailOver, Target: "redis-1"}, s.Faults[0]}
			s.Faults[1].At = Duration(3 * time.Second)
		}), "last fault"},
		{"fail-over on redlock", edit(func(s *Schedule) {
			s.Impl = "redlock"
			s.Faults = []Step{{At: Duration(time.Second), Kind: FailOver, Target: "redis-1"}}
		}), "single Redis"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
	for name, f := range Fixed {
		impl, topo := "redis-setnx-px", ""
		switch name {
		case "redlock-partition":
			impl = "redlock" // it cuts some of several nodes
		case "leader-isolated", "holder-server-cut":
			impl, topo = "zookeeper", "zk-ensemble" // they aim at an ensemble's roles
		case HolderSessionEnded:
			impl = "pg-advisory" // it ends a database session
		case "sentinel-master-kill", "sentinel-master-split", "sentinel-master-pause", "sentinel-isolated", "sentinel-split-at-grant", "sentinel-kill-at-grant",
			"sentinel-split-after-ack", SentinelSplitBrain:
			topo = "redis-sentinel" // they aim at a Sentinel group's master
		case "cluster-master-kill", "cluster-master-split":
			topo = "redis-cluster" // they aim at the lock key's slot master
		case MasterKillUnderLag, SentinelAckedReplicaLost, SentinelRejoiningReplicaPromoted:
			topo = "redis-sentinel" // it holds back a master's replicas
		case PrimaryFailover:
			impl, topo = "pg-advisory", "pg-replica-sync" // it promotes a PostgreSQL replica
		case PromotionUnderLag:
			impl, topo = "pg-advisory", "pg-replica-async" // it promotes a lagging PostgreSQL replica
		case PrimaryAckedStandbyLost:
			impl, topo = "pg-advisory", "pg-replica-sync-2" // it promotes one of two PostgreSQL replicas
		case PrimarySplitBrain:
			impl, topo = "pg-advisory", "pg-replica-async" // it splits a PostgreSQL primary from its replica
		}
		s := f(impl, false, time.Second, testBound)
		s.Topology = topo
		if err := s.Validate(); err != nil {
			t.Errorf("fixed %s: %v", name, err)
		}
		if err := s.Compact(testBound).Validate(); err != nil {
			t.Errorf("fixed %s compacted: %v", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := ok.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || !reflect.DeepEqual(back, ok) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, back, ok)
	}
}

// TestFailOverApplies: a fail-over needs a single Redis server, hosts, and
// a replica, and says which is missing.
func TestFailOverApplies(t *testing.T) {
	k, err := Lookup(FailOver)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		impl    string
		replica bool
		noHosts string
		want    string // part of the reason; "" means it applies
	}{
		{"single redis with a replica", "redis-setnx-px", true, "", ""},
		{"single redis without a replica", "redis-setnx-px", false, "", "no replica"},
		{"no hosts", "redis-setnx-px", true, "not root", "not root"},
		{"redlock", "redlock", true, "", "single Redis"},
		{"zookeeper", "zookeeper", true, "", "single Redis"},
		{"postgres", "pg-advisory", true, "", "single Redis"},
		{"in-process", "local-mutex", true, "", "single Redis"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			topo, _ := TopologyFor(spec, topology.SingleName, 4)
			topo.Replica, topo.NoHosts = tc.replica, tc.noHosts
			err = k.Applies(spec, topo)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Applies = %v, want %q", err, tc.want)
			}
			if tc.want == "" && !slices.Equal(k.Targets(topo), []string{"redis-1"}) {
				t.Errorf("targets %v, want the master redis-1", k.Targets(topo))
			}
		})
	}
}

// TestShrink runs the shrinker on synthetic predicates: the schedule
// "fails" when it holds certain faults (and, for one, only when the run is
// long enough).
func TestShrink(t *testing.T) {
	p := plan(t, "redis-setnx-px", 5, 3*time.Minute)
	orig := Generate(p)
	if len(orig.Faults) < 8 {
		t.Fatalf("want a long schedule, got %d faults", len(orig.Faults))
	}
	bound := p.Bound
	has := func(s Schedule, st Step) bool {
		for _, f := range s.Faults {
			if f.Kind == st.Kind && f.Target == st.Target && f.Duration == st.Duration {
				return true
			}
		}
		return false
	}
	a, b := orig.Faults[2], orig.Faults[len(orig.Faults)-2]
	tests := []struct {
		name     string
		fails    func(Schedule) bool
		suspects []int
		want     []Step // the minimal faults, in order
	}{
		{"fails by itself", func(Schedule) bool { return true }, nil, nil},
		{"one fault", func(s Schedule) bool { return has(s, a) }, nil, []Step{a}},
		{"one fault, suspected", func(s Schedule) bool { return has(s, a) }, []int{5, 2}, []Step{a}},
		{"two faults together", func(s Schedule) bool { return has(s, a) && has(s, b) }, []int{2}, []Step{a, b}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := Shrink(context.Background(), orig, bound, time.Minute, tc.suspects, func(_ context.Context, s Schedule) (bool, error) {
				if err := s.Validate(); err != nil {
					t.Fatalf("candidate is invalid: %v", err)
				}
				return tc.fails(s), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Faults) != len(tc.want) {
				t.Fatalf("shrunk to %d faults (%+v), want %d", len(got.Faults), got.Faults, len(tc.want))
			}
			for i, w := range tc.want {
				if g := got.Faults[i]; g.Kind != w.Kind || g.Target != w.Target || g.Duration != w.Duration {
					t.Errorf("fault %d = %+v, want %+v", i, g, w)
				}
			}
			if got.Duration >= orig.Duration {
				t.Errorf("run not shortened: %v", time.Duration(got.Duration))
			}
			if st.OutOfTime {
				t.Error("ran out of time on a synthetic predicate")
			}
		})
	}
	// A budget already spent returns the original.
	got, st, err := Shrink(context.Background(), orig, bound, 0, nil, func(context.Context, Schedule) (bool, error) { return true, nil })
	if err != nil || !reflect.DeepEqual(got, orig) || !st.OutOfTime {
		t.Fatalf("zero budget: %v, out of time %v, changed %v", err, st.OutOfTime, !reflect.DeepEqual(got, orig))
	}
}

// TestNodesCut: a cut of some of Redlock's five nodes names them by "+",
// and leaves a quorum exactly when at most two are cut.
func TestNodesCut(t *testing.T) {
	spec, _ := impls.Lookup("redlock")
	topo, _ := TopologyFor(spec, topology.SingleName, 4)
	targets := nodesCut{}.Targets(topo)
	if len(targets) != 31 || targets[0] != "redis-1" || targets[30] != "redis-1+redis-2+redis-3+redis-4+redis-5" {
		t.Fatalf("targets %v: want the 31 non-empty sets, smallest first", targets)
	}
	tests := []struct {
		st          Step
		cut, leaves bool
	}{
		{Step{Kind: NetPartitionNodes, Target: "redis-4+redis-5"}, true, true},
		{Step{Kind: NetPartitionNodes, Target: "redis-1+redis-2+redis-3"}, true, false},
		{Step{Kind: NetPartitionNodes, Target: "redis-3"}, true, true},
		{Step{Kind: NetIsolate, Target: "redis-3"}, false, false},
	}
	for _, tc := range tests {
		if cut, leaves := CutLeavesQuorum(tc.st, len(topo.Servers)); cut != tc.cut || leaves != tc.leaves {
			t.Errorf("%s %s: cut %v, leaves a quorum %v; want %v, %v", tc.st.Kind, tc.st.Target, cut, leaves, tc.cut, tc.leaves)
		}
	}
}

// TestEmptyRestartOnEnsembles: a member of an ensemble is restarted
// without its data only where its kind lets it rejoin (ZooKeeper); an etcd
// member would be refused by its own cluster, so the kind says why and the
// generator never draws it there.
func TestEmptyRestartOnEnsembles(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		skipped        string // part of the reason; "" when the kind applies
	}{
		{"zookeeper", "zk-ensemble", ""},
		{"etcd-lock", "etcd-cluster", "membership change"},
		{"etcd-lock", topology.SingleName, ""},
	} {
		t.Run(tc.impl+"@"+tc.topology, func(t *testing.T) {
			spec, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := TopologyFor(spec, tc.topology, 4)
			if err != nil {
				t.Fatal(err)
			}
			ks, skipped, err := Applicable(spec, topo, []string{ServerRestartEmpty, ServerKill})
			if err != nil && tc.skipped == "" {
				t.Fatal(err)
			}
			applies := slices.ContainsFunc(ks, func(k Kind) bool { return k.Name() == ServerRestartEmpty })
			switch {
			case tc.skipped == "" && !applies:
				t.Errorf("%s skipped: %q", ServerRestartEmpty, skipped[ServerRestartEmpty])
			case tc.skipped != "" && !strings.Contains(skipped[ServerRestartEmpty], tc.skipped):
				t.Errorf("%s: skipped for %q, want a reason containing %q", ServerRestartEmpty, skipped[ServerRestartEmpty], tc.skipped)
			}
		})
	}
}

// TestSplitWithHolderNeedsSentinel: the split of the master with the
// holder aims at a Sentinel group's master; on a quorum, which has a
// leader and no master, explore must not draw it (it did, and the run
// died finding no master).
func TestSplitWithHolderNeedsSentinel(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		applies        bool
	}{
		{"redis-setnx-px", topology.RedisSentinelName, true},
		{"etcd-lock", "etcd-cluster", false},
		{"zookeeper", "zk-ensemble", false},
	} {
		t.Run(tc.impl+"@"+tc.topology, func(t *testing.T) {
			spec, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := TopologyFor(spec, tc.topology, 4)
			if err != nil {
				t.Fatal(err)
			}
			if topo.NoHosts != "" {
				t.Skip(topo.NoHosts)
			}
			ks, skipped, _ := Applicable(spec, topo, nil)
			applies := slices.ContainsFunc(ks, func(k Kind) bool { return k.Name() == NetSplitWithHolder })
			if applies != tc.applies {
				t.Errorf("%s applies %v, want %v (skipped: %q)", NetSplitWithHolder, applies, tc.applies, skipped[NetSplitWithHolder])
			}
		})
	}
}

// TestGenerateAimsAtTheMaster: on a topology with a master, about half
// the faults that can strike it do; on one without, none names it.
func TestGenerateAimsAtTheMaster(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		master         bool
	}{
		{"redis-setnx-px", "redis-cluster", true},
		{"redis-setnx-px", topology.RedisSentinelName, true},
		{"zookeeper", "zk-ensemble", false},
	} {
		t.Run(tc.impl+"@"+tc.topology, func(t *testing.T) {
			spec, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := TopologyFor(spec, tc.topology, 4)
			if err != nil {
				t.Fatal(err)
			}
			if topo.NoHosts != "" {
				t.Skip(topo.NoHosts)
			}
			ks, _, err := Applicable(spec, topo, nil)
			if err != nil {
				t.Fatal(err)
			}
			canStrike, struck := 0, 0
			for seed := int64(1); seed <= 40; seed++ {
				s := Generate(Plan{Seed: seed, Impl: spec.Name, TTL: time.Second, Bound: testBound, Clients: 4,
					Duration: 2 * time.Minute, Topology: topo, Kinds: ks})
				for _, st := range s.Faults {
					k, err := Lookup(st.Kind)
					if err != nil {
						t.Fatal(err)
					}
					if slices.Contains(k.Targets(topo), MasterTarget) {
						canStrike++
						if st.Target == MasterTarget {
							struck++
						}
					}
				}
			}
			if !tc.master {
				if struck != 0 {
					t.Fatalf("%d faults aimed at a master on a topology without one", struck)
				}
				return
			}
			// Half by the draw, plus the master's share of the rest.
			if canStrike == 0 || float64(struck) < 0.4*float64(canStrike) {
				t.Fatalf("%d of %d faults that could strike the master did, want at least 40%%", struck, canStrike)
			}
		})
	}
}
