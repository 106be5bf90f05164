package benchmark

import (
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// A lock of ours is compared with the peer nearest its shape, and among
// those with a Go peer before a guest, whose figures include the protocol.
func TestClosestPeer(t *testing.T) {
	redis := func(name string, nodes int, peer, guest bool) impls.Spec {
		return impls.Spec{Name: name, Peer: peer, Guest: guest, Backend: impls.Backend{Kind: topology.Redis, Nodes: nodes}}
	}
	among := []impls.Spec{
		redis("guest:node-redlock-5", 5, true, true),
		redis("guest:redis-py", 1, true, true),
		redis("peer-redislock", 1, true, false),
		redis("peer-redsync-5", 5, true, false),
	}
	tests := []struct {
		lock impls.Spec
		want string
	}{
		{redis("redis-setnx-px", 1, false, false), "peer-redislock"},
		{redis("redlock", 5, false, false), "peer-redsync-5"},
		{redis("redis-fair", 1, false, false), "peer-redislock"},
	}
	for _, tt := range tests {
		got, ok := closestPeer(tt.lock, among)
		if !ok || got.Name != tt.want {
			t.Errorf("closest peer of %s: %q (%v), want %q", tt.lock.Name, got.Name, ok, tt.want)
		}
	}
	// The guest around our own redis-setnx-px is compared with that lock
	// (protocolTwins), never chosen as a peer.
	twin := redis("guest:lab-redis-setnx-px", 1, true, true)
	if got, _ := closestPeer(redis("redis-setnx-px", 1, false, false), []impls.Spec{twin, among[1]}); got.Name != "guest:redis-py" {
		t.Errorf("closest peer of redis-setnx-px beside the guest that wraps it: %q, want guest:redis-py", got.Name)
	}
	if got, ok := closestPeer(redis("redis-setnx-px", 1, false, false), []impls.Spec{twin}); ok {
		t.Errorf("the guest that wraps redis-setnx-px was chosen as its peer: %q", got.Name)
	}
	if _, ok := closestPeer(redis("guest:redis-py", 1, true, true), among); ok {
		t.Error("a guest, a peer itself, has a closest peer")
	}
}
