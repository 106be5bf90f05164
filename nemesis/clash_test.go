package nemesis

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// A kind that holds replication back for the run never shares a schedule
// with one that heals hosts whole: explore's generator draws them apart
// on every topology that has both, and Validate refuses them together.
func TestGenerateKeepsHeldBackLagApart(t *testing.T) {
	for _, tc := range []struct{ impl, topology string }{
		{"redis-fair", topology.RedisSentinelMinReplicasName},
		{"redis-setnx-px", topology.RedisClusterName},
		{"pg-optimistic", topology.PGReplicaAsyncName},
		{"mysql-optimistic", topology.MySQLReplicaSemisync2Name},
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
			var held, rules bool
			for _, k := range ks {
				_, h := k.(holdsBack)
				_, r := k.(rulesOnHosts)
				held, rules = held || h, rules || r
			}
			if !held || !rules {
				t.Fatalf("the topology draws no pair to keep apart (holds back: %v, rules on hosts: %v)", held, rules)
			}
			lagged := 0
			for seed := int64(1); seed <= 40; seed++ {
				s := Generate(Plan{Seed: seed, Impl: spec.Name, TTL: time.Second, Bound: testBound, Clients: 4,
					Duration: time.Minute, Topology: topo, Kinds: ks})
				s.Topology = tc.topology
				if err := s.Validate(); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				for _, st := range s.Faults {
					if k, _ := Lookup(st.Kind); k != nil {
						if _, ok := k.(holdsBack); ok {
							lagged++
							break
						}
					}
				}
			}
			if lagged == 0 {
				t.Errorf("no schedule in 40 seeds holds replication back: the kinds are kept apart by never drawing one")
			}
		})
	}
}

func TestValidateRefusesHeldBackLagWithNetFaults(t *testing.T) {
	// The kinds need the lab's hosts, which local mode has and container
	// mode refuses first (TestApplicable holds that reason).
	t.Setenv("LOCKLAB_SERVERS", "local")
	s := Schedule{Seed: 1, Impl: "redis-fair", Topology: topology.RedisSentinelMinReplicasName, TTL: Duration(time.Second),
		Clients: 4, Duration: Duration(time.Minute), Faults: []Step{
			{At: Duration(time.Second), Kind: NetDelay, Target: "client-3", Duration: Duration(time.Second)},
			{At: Duration(10 * time.Second), Kind: AckedReplicaLost, Target: MasterTarget, Duration: Duration(time.Second)},
		}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "holds replication back") {
		t.Fatalf("Validate() = %v, want the clash of %s and %s named", err, AckedReplicaLost, NetDelay)
	}
}

// Neither does one through the proxy with one that puts clients on hosts.
func TestValidateRefusesTheProxyOnHosts(t *testing.T) {
	// The kinds need the lab's hosts, which local mode has and container
	// mode refuses first (TestApplicable holds that reason).
	t.Setenv("LOCKLAB_SERVERS", "local")
	s := Schedule{Seed: 1, Impl: "etcd-lock", TTL: Duration(time.Second), Clients: 4, Duration: Duration(time.Minute), Faults: []Step{
		{At: Duration(time.Second), Kind: NetLoss, Target: "client-2", Duration: Duration(time.Second)},
		{At: Duration(10 * time.Second), Kind: ProxyReset, Target: "client-3@etcd", Duration: Duration(time.Second)},
	}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "in-process proxy") {
		t.Fatalf("Validate() = %v, want the clash of %s and %s named", err, ProxyReset, NetLoss)
	}
	// And the generator never draws them together where both apply.
	spec, _ := impls.Lookup("etcd-lock")
	topo, err := TopologyFor(spec, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	ks, _, err := Applicable(spec, topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 40; seed++ {
		s := Generate(Plan{Seed: seed, Impl: spec.Name, TTL: time.Second, Bound: testBound, Clients: 4, Duration: time.Minute, Topology: topo, Kinds: ks})
		if err := s.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// A client held at its failpoint through a server fault leaves the run
// after it: no later step may name it.
func TestValidateRefusesAClientThatLeft(t *testing.T) {
	s := Schedule{Seed: 2, Impl: "etcd-lock", TTL: Duration(time.Second), Clients: 4, Duration: Duration(time.Minute), Faults: []Step{
		{Kind: ServerKill, Target: "etcd", After: "in-critical-section", Holder: "client-0", Duration: Duration(3 * time.Second)},
		{At: Duration(50 * time.Second), Kind: ClientClockSkew, Target: "client-0", Duration: Duration(time.Second)},
	}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "client-0 left the run") {
		t.Fatalf("Validate() = %v, want client-0 named as gone", err)
	}
	s.Faults[1].Target = "client-1"
	if err := s.Validate(); err != nil {
		t.Fatalf("another client: Validate() = %v", err)
	}
}

// Two kinds that each hold replication back never share a schedule.
func TestValidateRefusesTwoHoldBacks(t *testing.T) {
	// The kinds need the lab's hosts, which local mode has and container
	// mode refuses first (TestApplicable holds that reason).
	t.Setenv("LOCKLAB_SERVERS", "local")
	s := Schedule{Seed: 1, Impl: "redis-lua-setnx-expire", Topology: topology.RedisSentinelMinReplicasName, TTL: Duration(time.Second),
		Clients: 4, Duration: Duration(time.Minute), Faults: []Step{
			{At: Duration(time.Second), Kind: LaggingMasterKill, Target: MasterTarget, Duration: Duration(time.Second)},
			{At: Duration(10 * time.Second), Kind: AckedReplicaLost, Target: MasterTarget, Duration: Duration(time.Second)},
		}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "undo each other") {
		t.Fatalf("Validate() = %v, want the two hold-backs refused", err)
	}
}
