package cluster

import "testing"

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
