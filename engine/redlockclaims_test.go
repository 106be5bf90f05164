package engine_test

import (
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/workload/docclaims"
)

// The claims' verdict is the checker's worst over every measurement, and
// names the one that gave it; the figures are the page's to judge.
// TestDocClaimsSmoke (package lessons) runs both jobs on real servers.
func TestJudgeRedlockClaims(t *testing.T) {
	granted := docclaims.SplitResult{Clients: 5, Rounds: []docclaims.SplitRound{{GrantMS: 1}, {Split: true, GrantMS: 30}}}
	unresolved := docclaims.SplitResult{Clients: 10, Rounds: []docclaims.SplitRound{{GrantMS: 1}, {Split: true, GrantMS: -1}}}
	row := func(down, n, refused int) docclaims.DownRow {
		return docclaims.DownRow{Down: down, Acquire: docclaims.Latency{N: n}, Refused: refused}
	}
	kept := docclaims.DownResult{Nodes: 5, Rows: []docclaims.DownRow{row(0, 5, 0), row(1, 5, 0), row(2, 5, 0), row(3, 0, 5)}}
	grantedWithout := docclaims.DownResult{Nodes: 5, Rows: []docclaims.DownRow{row(0, 5, 0), row(3, 1, 4)}}
	budget := docclaims.BudgetRow{Hold: "40ms", Granted: 3, GaveUp: 1}
	script := docclaims.ScriptResult{Leases: []docclaims.ScriptLease{{}, {Script: true, Refused: true, TakenByOther: true}}}
	keptToRule := engine.RedlockClaimsMeasured{Split: []docclaims.SplitResult{granted}, Down: kept, Budget: []docclaims.BudgetRow{budget}, Script: script}
	tests := []struct {
		name string
		edit func(m *engine.RedlockClaimsMeasured)
		want checker.Verdict
	}{
		{"kept to the rule", func(*engine.RedlockClaimsMeasured) {}, checker.Safe},
		{"nothing measured", func(m *engine.RedlockClaimsMeasured) { *m = engine.RedlockClaimsMeasured{} }, checker.Inconclusive},
		{"a round unresolved", func(m *engine.RedlockClaimsMeasured) { m.Split = append(m.Split, unresolved) }, checker.Stuck},
		{"a grant without a majority", func(m *engine.RedlockClaimsMeasured) { m.Down = grantedWithout }, checker.Unsafe},
		{"no grant within the budget", func(m *engine.RedlockClaimsMeasured) { m.Budget[0].Granted = 0 }, checker.Inconclusive},
		{"a refresh accepted on a taken lock", func(m *engine.RedlockClaimsMeasured) { m.Script.Leases[1].Refused = false }, checker.Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := keptToRule
			m.Budget = append([]docclaims.BudgetRow(nil), keptToRule.Budget...)
			m.Script.Leases = append([]docclaims.ScriptLease(nil), keptToRule.Script.Leases...)
			tt.edit(&m)
			if v, detail := engine.JudgeRedlockClaims(m); v != tt.want || (checker.Survived(v) != (detail == "")) {
				t.Fatalf("JudgeRedlockClaims = %s (%q), want %s, with a detail unless safe", v, detail, tt.want)
			}
		})
	}
}

// Each way of dying must have a trial.
func TestJudgeEphemeral(t *testing.T) {
	closed := docclaims.EphemeralResult{Way: "close", DeletedMS: []float64{3}}
	killed := docclaims.EphemeralResult{Way: "sigkill", DeletedMS: []float64{1020}}
	tests := []struct {
		name    string
		results []docclaims.EphemeralResult
		want    checker.Verdict
	}{
		{"no way", nil, checker.Inconclusive},
		{"a trial each way", []docclaims.EphemeralResult{closed, killed}, checker.Safe},
		{"a way without a trial", []docclaims.EphemeralResult{closed, {Way: "sigkill"}}, checker.Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, detail := engine.JudgeEphemeral(tt.results); v != tt.want || (checker.Survived(v) != (detail == "")) {
				t.Fatalf("JudgeEphemeral = %s (%q), want %s, with a detail unless safe", v, detail, tt.want)
			}
		})
	}
}
