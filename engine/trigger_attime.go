package engine

import (
	"context"

	"github.com/locklab/locklab/nemesis"
)

// atTime carries out nemesis.AtTime: the step strikes its target at its
// moment, whichever client holds the lock then, and runs its course.
type atTime struct{ nemesis.AtTime }

func (atTime) stopped() (int, string) { return -1, "" }

// warmUp has nothing to wait for: every client went when it could.
func (atTime) warmUp(context.Context, *scheduleRun) error { return nil }

// aim resolves a role; a fault that goes with the holder goes with
// whichever client is in its section now.
func (atTime) aim(ctx context.Context, r *scheduleRun, f *strike) error {
	return r.aimNow(ctx, f)
}

func (atTime) during(ctx context.Context, r *scheduleRun, f *strike) error {
	return r.waitOut(ctx, f, f.duration())
}

func (atTime) healed(context.Context, *scheduleRun, *strike) error { return nil }
