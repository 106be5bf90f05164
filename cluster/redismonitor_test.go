package cluster

import (
	"testing"

	"github.com/locklab/locklab/topology"
)

// MONITOR shows the commands a Lua script calls with "lua" as their
// source; only the others cost a round trip, less a cluster client's
// CLUSTER SLOTS (routing).
func TestClientCommand(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`+1700000000.123456 [0 127.0.0.1:5555] "evalsha" "abc" "1" "k"` + "\r\n", true},
		{`+1700000000.123457 [0 lua] "set" "k" "v" "NX" "PX" "2000"` + "\r\n", false},
		{`+1700000000.123458 [0 unix:/tmp/redis.sock] "del" "k"` + "\r\n", true},
		{`+1700000000.123459 [12 [::1]:6000] "get" "k"` + "\r\n", true},
		{`+1700000000.123460 [0 127.0.0.1:5556] "cluster" "slots"` + "\r\n", false},
		{`+1700000000.123461 [0 [::1]:6000] "cluster" "slots"` + "\r\n", false},
		{"+OK\r\n", false},
		{"-ERR nope\r\n", false},
	}
	for _, tt := range tests {
		if got := clientCommand(tt.line); got != tt.want {
			t.Errorf("clientCommand(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// The optional answers the benchmark and the nemesis ask instead of
// naming Redis: only the kind that has each gives it.
func TestOptionalKindAnswers(t *testing.T) {
	for _, name := range KindNames() {
		k, err := KindOf(topology.Kind(name))
		if err != nil {
			t.Fatal(err)
		}
		_, feed := k.(FeedCounter)
		_, hop := k.(WakeUpHopper)
		_, fan := k.(FanOuter)
		want := k.Kind() == topology.Redis
		if feed != want || hop != want || fan != want || KeepsNoData(k.Kind()) != want {
			t.Errorf("%s: feed counter %v, wake-up hop %v, fan-out %v, keeps no data %v; want %v for each",
				name, feed, hop, fan, KeepsNoData(k.Kind()), want)
		}
	}
	k, _ := KindOf(topology.Redis)
	if got := k.(WakeUpHopper).WakeUpRequest(); got != "RPUSH → BLPOP" {
		t.Errorf("wake-up request %q: the report names it RPUSH → BLPOP", got)
	}
	fo := k.(FanOuter)
	if n := fo.IndependentNodes(topology.Endpoint{Addrs: []string{"a", "b", "c"}}); n != 3 {
		t.Errorf("independent nodes of 3 lock nodes: %d", n)
	}
	if n := fo.IndependentNodes(topology.Endpoint{Via: "sentinel", Addrs: []string{"a", "b", "c"}}); n != 1 {
		t.Errorf("independent nodes behind a Sentinel group: %d, want 1", n)
	}
}
