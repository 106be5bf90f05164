package nemesis

import (
	"testing"

	"github.com/locklab/locklab/topology"
)

// Each kind says what it needs of a run's servers beyond the lock's own
// declaration; the engine asks it once per step (ScheduleTopology).
func TestShape(t *testing.T) {
	lock := topology.Of(topology.Single(topology.Redis))
	for _, tc := range []struct {
		kind       string
		hosts      bool
		clockShift bool
		groups     int // the lock's one group, and the replica a fail-over adds
	}{
		{ClientKill, false, false, 1},
		{ClientPause, false, false, 1},
		{ServerKill, false, false, 1},
		{ServerPause, false, false, 1},
		{ServerClockJump, false, true, 1},
		{NetPartitionClient, true, false, 1},
		{NetIsolate, true, false, 1},
		{NetPartitionNodes, true, false, 1},
		{NetSplitWithHolder, true, false, 1},
		{PrimaryPromotion, true, false, 1},
		{FailOver, true, false, 2},
		{ReplicationLag, true, false, 1},
		{LaggingMasterKill, true, false, 1},
		{LaggingPromotion, true, false, 1},
		{"no-such-kind", false, false, 1},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			d := Shape(tc.kind, lock)
			if d.Hosts != tc.hosts || NeedsHosts(tc.kind) != tc.hosts {
				t.Errorf("hosts %v (NeedsHosts %v), want %v", d.Hosts, NeedsHosts(tc.kind), tc.hosts)
			}
			if got := d.Groups[0].ClockShift; got != tc.clockShift {
				t.Errorf("clock shift %v, want %v", got, tc.clockShift)
			}
			if len(d.Groups) != tc.groups {
				t.Errorf("%d groups, want %d", len(d.Groups), tc.groups)
			}
			if lock.Groups[0].ClockShift || len(lock.Groups) != 1 {
				t.Error("Shape changed the declaration it was given")
			}
		})
	}
}
