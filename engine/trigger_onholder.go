package engine

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/nemesis"
)

// onHolder carries out nemesis.OnHolder: at its moment the step strikes
// the client in its critical section, and the history names which one.
type onHolder struct{ nemesis.OnHolder }

func (onHolder) stopped() (int, string) { return -1, "" }

// warmUp has nothing to wait for: every client went when it could.
func (onHolder) warmUp(context.Context, *scheduleRun) error { return nil }

// aim is the holder now: the client it strikes is no role and no server.
func (onHolder) aim(ctx context.Context, r *scheduleRun, f *strike) error {
	slot, who := r.holderNow(ctx)
	f.target, f.shown = fmt.Sprintf("client-%d", slot), who
	return nil
}

func (onHolder) during(ctx context.Context, r *scheduleRun, f *strike) error {
	return r.waitOut(ctx, f, f.duration())
}

func (onHolder) healed(context.Context, *scheduleRun, *strike) error { return nil }
