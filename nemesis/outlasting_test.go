package nemesis

import (
	"testing"
	"time"
)

// Outlasting stretches a fault on a server or a link between servers to
// the profile's fail-over plus a lease, and leaves a client's fault, the
// holder's and one already long enough as they were.
func TestOutlasting(t *testing.T) {
	tests := []struct {
		name string
		step Step
		want time.Duration
	}{
		{"the master cut short of the fail-over", Step{Kind: NetSplitWithHolder, Target: MasterTarget, Duration: Duration(26 * time.Second)}, 45 * time.Second},
		{"the leader cut short of the fail-over", Step{Kind: NetIsolate, Target: LeaderTarget, Duration: Duration(10 * time.Second)}, 45 * time.Second},
		{"a server fault already long enough", Step{Kind: ServerKill, Target: MasterTarget, Duration: Duration(time.Minute)}, time.Minute},
		{"a client's pause: the TTL's business", Step{Kind: ClientPause, Target: "client-0", Duration: Duration(25 * time.Second)}, 25 * time.Second},
		{"the holder, whoever it is", Step{Kind: ClientKill, Target: HolderTarget, Duration: Duration(10 * time.Second)}, 10 * time.Second},
		{"a fault with no length", Step{Kind: ServerRestartEmpty, Target: MasterTarget}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Schedule{Faults: []Step{tt.step}}
			got := s.Outlasting(45 * time.Second)
			if d := time.Duration(got.Faults[0].Duration); d != tt.want {
				t.Fatalf("duration %v, want %v", d, tt.want)
			}
			if s.Faults[0] != tt.step {
				t.Fatal("Outlasting changed the schedule it was given")
			}
		})
	}
}
