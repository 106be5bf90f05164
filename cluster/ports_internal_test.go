package cluster

import "testing"

// A port handed out is not handed out again until a ring's worth of others
// were: two servers picked one after another never share a port.
func TestFreePortNotHandedOutTwice(t *testing.T) {
	seen := map[int]bool{}
	for range len(recentPorts.ring) {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice within %d picks", p, len(recentPorts.ring))
		}
		// Below the bus ports, where the range has room for both: no
		// server is given another node's bus port.
		if ephemeralLow() >= serverPortFloor+2*clusterBusOffset && p >= serverPortFloor+clusterBusOffset {
			t.Fatalf("port %d is a cluster bus port's (from %d)", p, serverPortFloor+clusterBusOffset)
		}
		seen[p] = true
	}
}

func TestPortRing(t *testing.T) {
	r := &portRing{ring: make([]int, 2)}
	for _, tt := range []struct {
		port int
		want bool
	}{
		{10001, true},
		{10001, false}, // just handed out
		{10002, true},
		{10003, true},  // pushes 10001 out of the ring
		{10001, true},  // so it may be handed out again
		{10003, false}, // still in it
	} {
		if got := r.take(tt.port); got != tt.want {
			t.Errorf("take(%d) = %v, want %v", tt.port, got, tt.want)
		}
	}
}
