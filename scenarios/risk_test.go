package scenarios_test

import (
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/scenarios"
)

// TestEveryScenarioDeclaresItsRisk holds every scenario to saying when its
// fault puts the lock at risk: without a rule the checker cannot tell a
// run that exercised its fault from one that did not, and would call both
// safe.
func TestEveryScenarioDeclaresItsRisk(t *testing.T) {
	known := map[checker.Risk]bool{checker.RiskContention: true, checker.RiskAtStrike: true, checker.RiskAtPromotion: true, checker.RiskBothSides: true,
		checker.RiskAtExpiry: true, checker.RiskRecovery: true}
	for _, s := range scenarios.All() {
		if !known[s.Risk] {
			t.Errorf("%s declares risk %q, want one of the checker's rules (checker.Risk)", s.Name, s.Risk)
		}
	}
}
