package topology

import (
	"testing"
)

// redis-sentinel-min-replicas is redis-sentinel with the bound on every
// Redis of the group (the master and the replicas one of which becomes the
// next master), and nothing else changed.
func TestSentinelMinReplicasSettings(t *testing.T) {
	plain, err := RedisSentinel(Need{Kind: Redis})
	if err != nil {
		t.Fatal(err)
	}
	named, err := Lookup(RedisSentinelMinReplicasName)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := named.Declare(Need{Kind: Redis})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Nodes()) != len(bound.Nodes()) {
		t.Fatalf("%d nodes, redis-sentinel has %d", len(bound.Nodes()), len(plain.Nodes()))
	}
	for i, n := range bound.Nodes() {
		p := plain.Nodes()[i]
		tests := []struct {
			setting, value string
			want           bool
		}{
			{"min-replicas-to-write", "1", n.Kind == Redis},
			{"min-replicas-max-lag", "1", n.Kind == Redis},
			{"repl-diskless-sync-delay", "0", n.Kind == Redis},
		}
		for _, tt := range tests {
			if got := n.Settings[tt.setting] == tt.value; got != tt.want {
				t.Errorf("%s has %s %s: %v, want %v", n.Name, tt.setting, tt.value, got, tt.want)
			}
		}
		if _, ok := p.Settings["min-replicas-to-write"]; ok {
			t.Errorf("redis-sentinel's %s has the min-replicas bound too", p.Name)
		}
	}
	if _, err := named.Declare(Need{Kind: Redis, Replicas: true}); err != nil {
		t.Errorf("a lock that waits for replicas: %v", err)
	}
	if single, _ := Lookup(SingleName); single.Carries(Need{Kind: Redis, Replicas: true}) {
		t.Error("the single topology carries a lock that waits for replicas, and has none")
	}
}
