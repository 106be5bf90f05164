package scenarios

import (
	"errors"
	"github.com/locklab/locklab/checker"

	"github.com/locklab/locklab/impls"
)

// release-hand-off exists because a lock that keeps itself held after a
// release, so that only the releasing client can take it again, passed
// every other cell: in contention the releaser simply kept winning, the
// grants never paused, and the checker saw progress (the mutant
// pg-advisory-release-keeps-lock, impls/mutant). Here the releaser leaves
// after its one section while staying connected, so the others' progress
// rests on the release alone.
func init() {
	Register(Scenario{
		Risk: checker.RiskRecovery,
		Name: "release-hand-off",
		Summary: "the first holder releases and stays idle with its connections open; the clients already " +
			"waiting must be granted the lock within the bound",
		Applies: func(_ impls.Spec, fencing bool) error {
			if fencing {
				return errors.New("no stale writer: fencing changes nothing")
			}
			return nil
		},
		Workload: "release-hand-off",
	})
}
