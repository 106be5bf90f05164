package checker

import "testing"

// A set of races is stuck at its first race without a grant.
func TestJudgeVoteRaces(t *testing.T) {
	tests := []struct {
		name    string
		granted []bool
		want    Verdict
		bad     int
	}{
		{"no race", nil, Inconclusive, -1},
		{"a grant every race", []bool{true, true}, Safe, -1},
		{"a race unresolved", []bool{true, false, false}, Stuck, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, bad := JudgeVoteRaces(tc.granted); v != tc.want || bad != tc.bad {
				t.Errorf("JudgeVoteRaces = %s, race %d; want %s, race %d", v, bad, tc.want, tc.bad)
			}
		})
	}
}

// Acquires with nodes stalled keep to the majority rule: granted while a
// majority runs, refused once it does not.
func TestJudgeQuorumAcquires(t *testing.T) {
	row := func(down, granted, refused int) QuorumAcquires {
		return QuorumAcquires{Nodes: 5, Down: down, Granted: granted, Refused: refused}
	}
	kept := []QuorumAcquires{row(0, 50, 0), row(1, 50, 0), row(2, 50, 0), row(3, 0, 50)}
	tests := []struct {
		name string
		rows []QuorumAcquires
		want Verdict
		bad  int
	}{
		{"no row", nil, Inconclusive, -1},
		{"the rule kept, refused without a majority", kept, Safe, -1},
		{"refused with a majority running", []QuorumAcquires{row(0, 50, 0), row(2, 49, 1), row(3, 0, 50)}, Stuck, 1},
		{"granted without a majority", []QuorumAcquires{row(0, 50, 0), row(2, 49, 1), row(3, 1, 49)}, Unsafe, 2},
		{"a row that tried nothing", []QuorumAcquires{row(0, 0, 0), row(3, 0, 50)}, Inconclusive, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, bad := JudgeQuorumAcquires(tc.rows); v != tc.want || bad != tc.bad {
				t.Errorf("JudgeQuorumAcquires = %s, row %d; want %s, row %d", v, bad, tc.want, tc.bad)
			}
		})
	}
}

func TestJudgeProgress(t *testing.T) {
	for granted, want := range map[int]Verdict{0: Inconclusive, 1: Safe, 40: Safe} {
		if got := JudgeProgress(granted); got != want {
			t.Errorf("JudgeProgress(%d) = %s, want %s", granted, got, want)
		}
	}
}

// A holder's refresh must fail exactly when another client could take
// the lock after it.
func TestJudgeLeaseViews(t *testing.T) {
	extended, lost := LeaseView{}, LeaseView{RefreshFailed: true, TakenByOther: true}
	tests := []struct {
		name  string
		views []LeaseView
		want  Verdict
		bad   int
	}{
		{"no view", nil, Inconclusive, -1},
		{"extended, then lost and known", []LeaseView{extended, lost}, Safe, -1},
		{"refreshed while another took it", []LeaseView{extended, {TakenByOther: true}}, Inconclusive, 1},
		{"refused while nobody could take it", []LeaseView{{RefreshFailed: true}, lost}, Inconclusive, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, bad := JudgeLeaseViews(tc.views); v != tc.want || bad != tc.bad {
				t.Errorf("JudgeLeaseViews = %s, view %d; want %s, view %d", v, bad, tc.want, tc.bad)
			}
		})
	}
}
