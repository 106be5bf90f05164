package cluster

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseReplication reads INFO replication as Redis 7.0 writes it (CRLF
// lines, a section header) into the offsets a WAIT is answered from.
func TestParseReplication(t *testing.T) {
	master := strings.Join([]string{
		"# Replication",
		"role:master",
		"connected_slaves:2",
		"slave0:ip=10.77.0.3,port=16380,state=online,offset=5210,lag=0",
		"slave1:ip=10.77.0.4,port=16381,state=wait_bgsave,offset=0,lag=1",
		"master_failover_state:no-failover",
		"master_replid:4f3c",
		"master_repl_offset:5238",
		"repl_backlog_active:1",
		"",
	}, "\r\n")
	tests := []struct {
		name string
		info string
		want Replication
		err  string // part of the error; "" means none
	}{
		{"master with replicas", master, Replication{Role: "master", Offset: 5238, PromotedAt: -1, Replicas: []ReplicaAck{
			{Addr: "10.77.0.3:16380", State: "online", Offset: 5210, Lag: 0},
			{Addr: "10.77.0.4:16381", State: "wait_bgsave", Offset: 0, Lag: 1},
		}}, ""},
		{"replica", "role:slave\r\nmaster_host:10.77.0.2\r\nmaster_repl_offset:77\r\n", Replication{Role: "replica", Offset: 77, PromotedAt: -1}, ""},
		{"replica with its processed offset", "role:slave\r\nslave_repl_offset:70\r\nmaster_repl_offset:77\r\n",
			Replication{Role: "replica", Offset: 77, ReplicaOffset: 70, PromotedAt: -1}, ""},
		{"bad processed offset", "role:slave\r\nslave_repl_offset:x\r\nmaster_repl_offset:77\r\n",
			Replication{Role: "replica", Offset: 77, PromotedAt: -1}, "slave_repl_offset"},
		// A replica promoted keeps where it stopped following, one past it,
		// in second_repl_offset; a master that never followed says -1.
		{"promoted replica", "role:master\r\nmaster_repl_offset:5300\r\nsecond_repl_offset:5211\r\n",
			Replication{Role: "master", Offset: 5300, PromotedAt: 5210}, ""},
		{"never followed", "role:master\r\nmaster_repl_offset:5300\r\nsecond_repl_offset:-1\r\n",
			Replication{Role: "master", Offset: 5300, PromotedAt: -1}, ""},
		{"no role", "master_repl_offset:1\r\n", Replication{}, "no role line"},
		{"no offset", "role:master\r\n", Replication{Role: "master"}, "master_repl_offset"},
		{"bad replica line", "role:master\r\nmaster_repl_offset:9\r\nslave0:ip=a,port=1,state=online,lag=0\r\n",
			Replication{Role: "master", Offset: 9, PromotedAt: -1}, "slave0: offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReplication(tt.info)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAckedBy counts replicas as WAIT does: online, and acknowledged at or
// past the offset; a replica still syncing counts for nothing.
func TestAckedBy(t *testing.T) {
	r := Replication{Role: "master", Offset: 100, Replicas: []ReplicaAck{
		{Addr: "a:1", State: "wait_bgsave", Offset: 500},
		{Addr: "b:2", State: "online", Offset: 90},
		{Addr: "c:3", State: "online", Offset: 100},
	}}
	tests := []struct {
		offset int64
		want   string // the replica's address; "" means none
	}{
		{80, "b:2"},
		{100, "c:3"},
		{101, ""},
	}
	for _, tt := range tests {
		a, ok := r.AckedBy(tt.offset)
		if ok != (tt.want != "") || a.Addr != tt.want {
			t.Errorf("AckedBy(%d) = %+v, %v, want %q", tt.offset, a, ok, tt.want)
		}
	}
}

// TestRoleOf: a role is read from the role line alone, so offsets or
// replica lines the parser would refuse do not hide it.
func TestRoleOf(t *testing.T) {
	tests := []struct {
		info, want, err string
	}{
		{"role:master\r\nmaster_repl_offset:not-a-number\r\n", "master", ""},
		{"role:slave\r\nslave0:garbled\r\n", "replica", ""},
		{"master_repl_offset:1\r\n", "", "no role line"},
	}
	for _, tt := range tests {
		got, err := roleOf(infoFields(tt.info))
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Fatalf("roleOf(%q): error %v, want %q", tt.info, err, tt.err)
		}
		if got != tt.want {
			t.Errorf("roleOf(%q) = %q, want %q", tt.info, got, tt.want)
		}
	}
}
