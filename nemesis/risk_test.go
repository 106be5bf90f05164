package nemesis

import (
	"testing"

	lin "github.com/locklab/locklab/linearizability"
)

// TestEveryKindDeclaresItsRisk holds a new kind to saying when its fault
// puts a lock at risk: without it explore cannot count whether the fault
// bit.
func TestEveryKindDeclaresItsRisk(t *testing.T) {
	for _, name := range Names() {
		if _, ok := kinds[name].(Risker); !ok {
			t.Errorf("kind %s declares no risk rule (add a Risk method in risk.go)", name)
		}
	}
}

func TestRiskOf(t *testing.T) {
	for _, c := range []struct{ kind, target, want string }{
		{ClientKill, "client-1", lin.RiskRecovery},
		{ClientPause, HolderTarget, lin.RiskAtExpiry},
		{NetIsolate, "client-2", lin.RiskAtExpiry},
		{NetIsolate, "zookeeper-1", lin.RiskAtStrike},
		{NetIsolate, LeaderTarget, lin.RiskAtStrike},
		{ServerRestartEmpty, "redis-1", lin.RiskAtStrike},
		{ReplicationLag, MasterTarget, ""},
		{"no-such-kind", "redis-1", ""},
	} {
		if got := RiskOf(c.kind, c.target); got != c.want {
			t.Errorf("RiskOf(%s, %s) = %q, want %q", c.kind, c.target, got, c.want)
		}
	}
}
