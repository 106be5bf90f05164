package checker

import (
	"testing"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// A random schedule's run has no rule of its own; each fault is judged by
// the rule its kind declared, and the run's verdict does not change.
func TestFaultsExercised(t *testing.T) {
	// withRisk is holderHistory with its pause declaring risk.
	withRisk := func(risk string, more ...lin.Event) []lin.Event {
		events := holderHistory([]int{0})
		for i := range events {
			if events[i].Injection != nil {
				inj := *events[i].Injection
				inj.Risk = risk
				events[i].Injection = &inj
			}
		}
		return with(events, more...)
	}
	refused := lin.Event{Kind: lin.AcquireFailed, Time: 1500 * ms, Client: 1}
	grantedLater := lin.Event{Kind: lin.Acquired, Time: 2700 * ms, Client: 1}
	otherCall := lin.Event{Kind: lin.Call, Time: 300 * ms, Client: 1, Op: 1}
	thirdCall := lin.Event{Kind: lin.Call, Time: 400 * ms, Client: 2, Op: 1}
	tests := []struct {
		name              string
		events            []lin.Event
		faults, exercised int
	}{
		{"a fault whose kind declares no rule is not counted", withRisk("", refused), 0, 0},
		{"expiry: a refusal after the lease ran out bit", withRisk(lin.RiskAtExpiry, refused), 1, 1},
		{"expiry: nobody came", withRisk(lin.RiskAtExpiry), 1, 0},
		{"recovery: another client was granted after the holder was struck", withRisk(lin.RiskRecovery, grantedLater), 1, 1},
		{"recovery: nobody else was granted", withRisk(lin.RiskRecovery), 1, 0},
		{"contention: two clients began acts during the fault", withRisk(lin.RiskContention, otherCall, thirdCall), 1, 1},
		{"contention: one client did", withRisk(lin.RiskContention, otherCall), 1, 0},
		{"an unknown rule is not counted", withRisk("sometime", refused), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Events: tt.events, TTL: time.Second, Claim: Claim{Expires: true}}
			ex := Exercised(in)
			if ex.Judged {
				t.Errorf("a run with no rule was judged; its verdict must not rest on its faults")
			}
			if ex.Faults != tt.faults || ex.FaultsExercised != tt.exercised {
				t.Errorf("faults %d, exercised %d; want %d, %d", ex.Faults, ex.FaultsExercised, tt.faults, tt.exercised)
			}
			if d := Decide(in); d.Verdict == NotExercised || d.Verdict == NotApplicable {
				t.Errorf("verdict %s: a random schedule's faults must not decide it", d.Verdict)
			}
		})
	}
}
