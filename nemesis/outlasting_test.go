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
			s := Schedule{Faults: []Step{tt.step}, Duration: Duration(time.Minute + 10*time.Second)}
			got := s.Outlasting(45 * time.Second)
			if d := time.Duration(got.Faults[0].Duration); d != tt.want {
				t.Fatalf("duration %v, want %v", d, tt.want)
			}
			// The time after the heal is the schedule's as declared.
			before := time.Duration(s.Duration) - s.Faults[0].Heal()
			if after := time.Duration(got.Duration) - got.Faults[0].Heal(); after != before {
				t.Fatalf("the run goes on %v after the heal, was %v", after, before)
			}
			if s.Faults[0] != tt.step {
				t.Fatal("Outlasting changed the schedule it was given")
			}
		})
	}
}

// A later fault moves by as much as the one before it was stretched, so
// faults that did not overlap still do not.
func TestOutlastingMovesLaterFaults(t *testing.T) {
	s := Schedule{Duration: Duration(30 * time.Second), Faults: []Step{
		{Kind: NetIsolate, Target: LeaderTarget, Duration: Duration(5 * time.Second)},
		{At: Duration(8 * time.Second), Kind: ServerKill, Target: "zookeeper-2", Duration: Duration(time.Minute)},
	}}
	got := s.Outlasting(20 * time.Second)
	if at := time.Duration(got.Faults[1].At); at != 23*time.Second {
		t.Fatalf("the second fault starts at %v, want 23s", at)
	}
	if d := time.Duration(got.Duration); d != 45*time.Second {
		t.Fatalf("the run lasts %v, want 45s", d)
	}
}
