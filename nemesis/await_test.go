package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestAwaitReplicaAck: the wait reads the master's offset once, then
// strikes at the first reading in which some online replica has
// acknowledged it, and says which; it fails, saying what it saw, when the
// reading is not a master's or no replica acknowledges within the bound.
func TestAwaitReplicaAck(t *testing.T) {
	online := func(off int64) cluster.ReplicaAck {
		return cluster.ReplicaAck{Addr: "10.0.0.3:6379", State: "online", Offset: off}
	}
	master := func(off int64, rs ...cluster.ReplicaAck) cluster.Replication {
		return cluster.Replication{Role: "master", Offset: off, Replicas: rs}
	}
	tests := []struct {
		name  string
		reads []cluster.Replication // the last repeats
		err   error                 // returned by every read
		want  string                // part of the note, or of the error
		fails bool
	}{
		{"acknowledged already", []cluster.Replication{master(100, online(100))}, nil,
			"redis-1's master_repl_offset was 100 when the wait began; replica 10.0.0.3:6379 acknowledged 100", false},
		{"acknowledged on the third reading", []cluster.Replication{
			master(100, online(60)), master(130, online(60)), master(130, online(130)),
		}, nil, "master_repl_offset was 100 when the wait began; replica 10.0.0.3:6379 acknowledged 130", false},
		{"a replica still syncing counts for nothing", []cluster.Replication{
			master(100, cluster.ReplicaAck{Addr: "10.0.0.4:6379", State: "wait_bgsave", Offset: 500}),
		}, nil, "no replica of redis-1 acknowledged its offset 100 within 30ms (its replicas: 10.0.0.4:6379 wait_bgsave at 500, lag 0s)", true},
		{"no replica", []cluster.Replication{master(100)}, nil, "its replicas: none connected", true},
		{"not the master", []cluster.Replication{{Role: "replica", Offset: 100}}, nil, "redis-1 is a replica now, not the master", true},
		{"unreadable", []cluster.Replication{{}}, errors.New("connection refused"), "connection refused", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			read := func(context.Context) (cluster.Replication, error) {
				r := tt.reads[min(n, len(tt.reads)-1)]
				n++
				return r, tt.err
			}
			note, err := awaitReplicaAck(context.Background(), read, "redis-1", 30*time.Millisecond, time.Millisecond)
			got := note
			if err != nil {
				got = err.Error()
			}
			if (err != nil) != tt.fails || !strings.Contains(got, tt.want) {
				t.Fatalf("got %q (error %v), want %q (fails %v)", got, err, tt.want, tt.fails)
			}
		})
	}
}

// TestValidateAwait: an await is a known state, of a master the step
// aims at by its role, read while a holder stands at its failpoint; a
// holder's going on inside the fault needs a holder.
func TestValidateAwait(t *testing.T) {
	t.Setenv("LOCKLAB_SERVERS", "local")
	base := Fixed["sentinel-split-after-ack"]("redis-setnx-px-wait", false, time.Second, testBound)
	base.Topology = topology.RedisSentinelName
	if base.Faults[0].Await != ReplicaAcked {
		t.Fatalf("sentinel-split-after-ack awaits %q, want %q", base.Faults[0].Await, ReplicaAcked)
	}
	edit := func(f func(*Step)) Schedule {
		s := base
		s.Faults = []Step{base.Faults[0]}
		f(&s.Faults[0])
		return s
	}
	tests := []struct {
		name string
		s    Schedule
		want string // part of the error; "" means valid
	}{
		{"as fixed", base, ""},
		{"a kill", edit(func(st *Step) { st.Kind = ServerKill }), ""},
		{"unknown", edit(func(st *Step) { st.Await = "meteor" }), `unknown await "meteor"`},
		{"a server by name", edit(func(st *Step) { st.Kind, st.Target = ServerKill, "redis-1" }), "must aim at master"},
		{"at a time", edit(func(st *Step) {
			st.Kind, st.At, st.After, st.Holder, st.GoesOn = ServerKill, Duration(Lead), "", "", ""
		}), "needs a holder stopped at a failpoint"},
		{"holder goes on after the heal", edit(func(st *Step) { st.GoesOn = "" }), ""},
		{"holder goes on at an unknown time", edit(func(st *Step) { st.GoesOn = "later" }), `unknown goes_on "later"`},
		{"goes on without a holder", edit(func(st *Step) {
			st.Await, st.Kind, st.At, st.After, st.Holder = "", ServerKill, Duration(Lead), "", ""
		}), "the step needs a holder"},
		{"goes on once replicated", edit(func(st *Step) { st.Await, st.Kind, st.GoesOn = "", ServerKill, OnceReplicated }), ""},
		{"goes on once a named server is replicated", edit(func(st *Step) {
			st.Await, st.Kind, st.Target, st.GoesOn = "", ServerKill, "redis-1", OnceReplicated
		}), "must aim at master"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.s.Faults[0].Kind == NetSplitWithHolder && hostsMissing(t, tt.s.Impl, tt.s.Topology) {
				return
			}
			err := tt.s.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// hostsMissing skips a test of a network fault where the lab cannot make
// hosts (container mode, or no root), saying why.
func hostsMissing(t *testing.T, impl, named string) bool {
	t.Helper()
	spec, err := impls.Lookup(impl)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := TopologyFor(spec, named, 2)
	if err != nil {
		t.Fatal(err)
	}
	if topo.NoHosts != "" {
		t.Skip(topo.NoHosts)
		return true
	}
	return false
}

// TestSplitAfterAckIsSplitAtGrantAwaited: the new schedule is
// sentinel-split-at-grant's step with the wait for a replica's
// acknowledgement and its holder going on inside the cut, and a second
// more to observe after it; the old one strikes at once and holds its
// holder until the heal, as it always has. Both are written in the
// schedule's file and read back.
func TestSplitAfterAckIsSplitAtGrantAwaited(t *testing.T) {
	for _, fencing := range []bool{false, true} {
		atGrant := Fixed["sentinel-split-at-grant"]("redis-setnx-px-wait", fencing, time.Second, testBound)
		afterAck := Fixed["sentinel-split-after-ack"]("redis-setnx-px-wait", fencing, time.Second, testBound)
		if st := atGrant.Faults[0]; st.Await != "" || st.GoesOn != "" {
			t.Errorf("sentinel-split-at-grant awaits %q and its holder goes on %q; it strikes at once and its holder goes on after the heal",
				st.Await, st.GoesOn)
		}
		want := atGrant.Faults[0]
		want.Await, want.GoesOn = ReplicaAcked, InFault
		if !reflect.DeepEqual(afterAck.Faults, []Step{want}) {
			t.Errorf("sentinel-split-after-ack's faults %+v, want %+v", afterAck.Faults, []Step{want})
		}
		if d := time.Duration(afterAck.Duration - atGrant.Duration); d != time.Second {
			t.Errorf("sentinel-split-after-ack runs %v longer than sentinel-split-at-grant, want 1s", d)
		}
		b, err := json.Marshal(afterAck)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"await":"replica-acked"`) || !strings.Contains(string(b), `"goes_on":"in-fault"`) {
			t.Errorf("the schedule's file does not say what it awaits and when its holder goes on: %s", b)
		}
		var back Schedule
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, afterAck) {
			t.Errorf("round trip: %v\n%+v\n%+v", err, back, afterAck)
		}
	}
}

// TestReplicatedMaster: a holder that goes on OnceReplicated goes on only
// when one master counts a replica online; a promoted master whose
// replicas are still syncing or gone keeps it waiting, and a restarted
// master that still says master with no replica does not.
func TestReplicatedMaster(t *testing.T) {
	online := cluster.ReplicaAck{Addr: "10.0.0.3:6379", State: "online"}
	syncing := cluster.ReplicaAck{Addr: "10.0.0.3:6379", State: "wait_bgsave"}
	tests := []struct {
		name   string
		seen   map[string]cluster.Replication
		master string
		ok     bool
	}{
		{"promoted master with a replica online", map[string]cluster.Replication{
			"redis-1": {Role: "replica"}, "redis-2": {Role: "master", Replicas: []cluster.ReplicaAck{online}}}, "redis-2", true},
		{"promoted master with no replica", map[string]cluster.Replication{
			"redis-1": {Role: "replica"}, "redis-2": {Role: "master"}}, "", false},
		{"its replica still syncing", map[string]cluster.Replication{
			"redis-2": {Role: "master", Replicas: []cluster.ReplicaAck{syncing}}}, "", false},
		{"the restarted master still says master, with no replica", map[string]cluster.Replication{
			"redis-0": {Role: "master"}, "redis-2": {Role: "master", Replicas: []cluster.ReplicaAck{online}}}, "redis-2", true},
		{"two masters with a replica online", map[string]cluster.Replication{
			"redis-0": {Role: "master", Replicas: []cluster.ReplicaAck{online}},
			"redis-2": {Role: "master", Replicas: []cluster.ReplicaAck{online}}}, "", false},
		{"no master", map[string]cluster.Replication{"redis-1": {Role: "replica"}}, "", false},
		{"nothing read", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			master, replica, ok := ReplicatedMaster(tt.seen)
			if ok != tt.ok || ok && (master != tt.master || replica != online.Addr) {
				t.Fatalf("ReplicatedMaster() = %q, %q, %v; want %q, %v", master, replica, ok, tt.master, tt.ok)
			}
		})
	}
}
