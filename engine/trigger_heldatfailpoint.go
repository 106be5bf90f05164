package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/nemesis"
)

// heldAtFailpoint carries out nemesis.HeldAtFailpoint: the holder stops
// at its failpoint, as for atFailpoint, while the fault strikes something
// else (a lock server, the holder's server, a role's server that goes
// with the holder); the holder goes on after the heal, or inside the
// fault (InFault, InLease), once another client has read the resource.
type heldAtFailpoint struct{ nemesis.HeldAtFailpoint }

func (t heldAtFailpoint) stopped() (int, string) { return t.Holder, t.Failpoint }

func (t heldAtFailpoint) warmUp(ctx context.Context, r *scheduleRun) error {
	if err := r.awaitStopped(ctx, t.Holder, t.Failpoint); err != nil {
		return err
	}
	return r.goAllBut(t.Holder)
}

// aim resolves a role, and a server that goes with the holder goes with
// the one stopped at its failpoint; the holder's server is the one it is
// connected to.
func (t heldAtFailpoint) aim(ctx context.Context, r *scheduleRun, f *strike) error {
	held := func(context.Context) (int, string) { return t.Holder, fmt.Sprintf("client-%d", t.Holder) }
	if err := r.aimAtServer(ctx, f, held); err != nil {
		return err
	}
	if f.target != nemesis.HolderServerTarget {
		return nil
	}
	server, err := r.sys.serverOf(ctx, t.Holder)
	if err != nil {
		return f.errorf(err)
	}
	role, err := r.env.Topo.Role(ctx, server)
	if err != nil {
		role = "role unknown: " + err.Error()
	}
	f.target = server
	f.shown = fmt.Sprintf("holder-server %s (client-%d's, the %s)", server, t.Holder, role)
	if nemesis.ClientOnly(f.st.Kind) {
		// A client fault: the holder's link to its server alone.
		f.target = nemesis.Link(fmt.Sprintf("client-%d", t.Holder), server)
	}
	return nil
}

// during, for a holder that goes on inside the fault, lets it go on once
// another client has read the resource since the fault began, at the
// latest as long before the heal as a struck client would, and leave
// after that section; the fault then runs its course. What the holder
// asks of a server cut off with it is answered as the cut left that
// server, not after whatever the heal lets through first
// (nemesis.Step.GoesOn).
func (t heldAtFailpoint) during(ctx context.Context, r *scheduleRun, f *strike) error {
	wait := f.duration()
	if t.InFault || t.InLease {
		goOn := wait - nemesis.InCut(r.ttl, wait)
		if t.InLease {
			r.sys.mu.Lock()
			holder := r.sys.slots[t.Holder]
			r.sys.mu.Unlock()
			goOn = withinLease(r.env, holder, handOffWait(r.env))
		}
		if err := r.sys.handOff(ctx, t.Holder, f.begin, goOn); err != nil {
			return fmt.Errorf("continue client %d: %w", t.Holder, err)
		}
		f.note += fmt.Sprintf(", %s went on %v into the fault", f.st.Holder, time.Since(f.wholeAt).Round(time.Millisecond))
		wait = max(0, wait-time.Since(f.wholeAt))
	}
	return r.waitOut(ctx, f, wait)
}

// healed lets a holder held up through the fault go on, once another
// client has read the resource since the fault began (or holdUp passed),
// and, for OnceReplicated, a master counts a replica online, and
// leave after that section.
func (t heldAtFailpoint) healed(ctx context.Context, r *scheduleRun, f *strike) error {
	if t.InFault || t.InLease {
		return nil
	}
	var ready func(context.Context) error
	if t.OnceReplicated {
		ready = func(ctx context.Context) error {
			var servers []*cluster.Node
			for _, name := range r.sys.LockServers() {
				n, err := r.sys.Server(name)
				if err != nil {
					return err
				}
				servers = append(servers, n)
			}
			seen, err := nemesis.AwaitReplicatedMaster(ctx, servers, nemesis.ReplicatedMasterBound)
			if err != nil {
				return err
			}
			f.note += fmt.Sprintf(", %s went on once %s", f.st.Holder, seen)
			return nil
		}
	}
	if err := r.sys.handOffWhen(ctx, t.Holder, f.begin, holdUp(r.env, f.kind), ready); err != nil {
		return fmt.Errorf("continue client %d: %w", t.Holder, err)
	}
	return nil
}
