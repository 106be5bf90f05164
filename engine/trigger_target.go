package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/nemesis"
)

// aimAtServer resolves a step aimed at a role to the server that has it
// now, which the fault heals even if the role has moved since, and waits
// there for what the step awaits. A fault that goes with the holder
// (nemesis.WithHolder) cuts the server off with the client holding names;
// the holder's server is resolved by the one handler that holds a
// client through the fault (heldAtFailpoint.aim).
func (r *scheduleRun) aimAtServer(ctx context.Context, f *strike, holding func(context.Context) (int, string)) error {
	role, ok := nemesis.RoleOf(f.target)
	if !ok {
		return nil
	}
	server, err := r.sys.ServerWithRole(ctx, role)
	if err != nil {
		return f.errorf(err)
	}
	f.target, f.shown = server, role+" "+server
	if f.st.Await != "" {
		// It strikes only once the state it waits for has come on that
		// server (Validate allows an await on a master only); the wait is
		// the nemesis's, the lock knows nothing of it.
		n, err := r.sys.Server(server)
		if err != nil {
			return f.errorf(fmt.Errorf("await %s: %w", f.st.Await, err))
		}
		if f.awaited, err = nemesis.AwaitOn(ctx, f.st.Await, n); err != nil {
			return f.errorf(err)
		}
		r.logf("fault %d/%d: awaited %s", f.i+1, len(r.s.Faults), f.awaited)
	}
	if nemesis.WithHolder(f.st.Kind) {
		// The server goes with the holder: the one stopped at its
		// failpoint in a fixed schedule, or, drawn at a random moment by
		// explore, whichever client holds the lock now.
		slot, who := holding(ctx)
		f.shown = fmt.Sprintf("%s with %s", f.shown, who)
		f.target = nemesis.Link(fmt.Sprintf("client-%d", slot), server)
	}
	return nil
}

// aimNow is aimAtServer for a trigger that holds no client at a
// failpoint through the fault: a server that goes with the holder goes
// with whichever client is in its section now, and no holder's server
// can be named.
func (r *scheduleRun) aimNow(ctx context.Context, f *strike) error {
	if err := r.aimAtServer(ctx, f, r.holderNow); err != nil {
		return err
	}
	if f.target == nemesis.HolderServerTarget {
		return f.errorf(errors.New("the holder's server needs a holder held at a failpoint"))
	}
	return nil
}

// holderNow is the client inside its critical section now, waiting up to
// a TTL for one, and how the record shows it.
func (r *scheduleRun) holderNow(ctx context.Context) (int, string) {
	slot, how := r.sys.holder(ctx, r.ttl)
	return slot, fmt.Sprintf("holder client-%d%s", slot, how)
}
