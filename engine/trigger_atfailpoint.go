package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/nemesis"
)

// atFailpoint carries out nemesis.AtFailpoint: the client it stops alone
// takes the first grant and stops at the failpoint, inside its section;
// the others go only then, the fault strikes the stopped client there,
// and it goes on from the failpoint just before the heal.
type atFailpoint struct{ nemesis.AtFailpoint }

func (t atFailpoint) stopped() (int, string) { return t.Client, t.Failpoint }

func (t atFailpoint) warmUp(ctx context.Context, r *scheduleRun) error {
	if err := r.awaitStopped(ctx, t.Client, t.Failpoint); err != nil {
		return err
	}
	return r.goAllBut(t.Client)
}

// aim resolves a role, though a step that stops a client strikes it.
func (atFailpoint) aim(ctx context.Context, r *scheduleRun, f *strike) error {
	return r.aimNow(ctx, f)
}

// during lets the struck client go on from its failpoint just before the
// heal (a paused one reads the line when it wakes; a killed one reads
// nothing), except one cut off by the network: it goes on a TTL before
// the heal (at most half the cut), so that its write, to the resource it
// still reaches, and its release, to lock servers it does not, both meet
// the cut, as they would for a holder that cannot know it was cut off.
func (t atFailpoint) during(ctx context.Context, r *scheduleRun, f *strike) error {
	wait, inCut := f.duration(), time.Duration(0)
	if nemesis.IsNetwork(f.st.Kind) {
		inCut = nemesis.InCut(r.ttl, wait)
		wait -= inCut
	}
	if err := r.waitOut(ctx, f, wait); err != nil {
		return err
	}
	if err := r.sys.slots[t.Client].Continue(); err != nil && f.st.Kind != nemesis.ClientKill {
		return fmt.Errorf("continue client %d: %w", t.Client, err)
	}
	return r.waitOut(ctx, f, inCut)
}

func (atFailpoint) healed(context.Context, *scheduleRun, *strike) error { return nil }
