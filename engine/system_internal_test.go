package engine

import "testing"

// TestSamePeer: the holder's server is found however ss prints the peer.
func TestSamePeer(t *testing.T) {
	for _, tc := range []struct {
		peer, addr string
		want       bool
	}{
		{"10.0.0.3:2181", "10.0.0.3:2181", true},
		{"[::ffff:10.0.0.3]:2181", "10.0.0.3:2181", true}, // a JVM's dual-stack socket
		{"[::ffff:10.0.0.3]:2182", "10.0.0.3:2181", false},
		{"10.0.0.4:2181", "10.0.0.3:2181", false},
		{"127.0.0.1:6379", "localhost:6379", false}, // names are not resolved
	} {
		if got := samePeer(tc.peer, tc.addr); got != tc.want {
			t.Errorf("samePeer(%q, %q) = %v, want %v", tc.peer, tc.addr, got, tc.want)
		}
	}
}
