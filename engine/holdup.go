package engine

import (
	"context"
	"time"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// How long a holder stopped at its failpoint through a fault waits for
// another client before it goes on (trigger_heldatfailpoint.go,
// trigger_inqueue.go).

// handOffWait bounds how long a held-up victim waits for another client
// before it goes on anyway: half a TTL, so the victim still writes within
// its own lease and the only fault is the injected one.
func handOffWait(env *Env) time.Duration { return env.TTL / 2 }

// holdUp bounds how long a holder held up by a fault of kind k waits for
// another client before it goes on: handOffWait, so that a lease's holder
// still writes within its lease; but a lock with no expiry has no lease
// to stay within, and after a fault that makes clients reconnect
// (nemesis.Reconnecting) it waits at least as long as a live client
// takes to reach the servers again, so that a lock the fault broke has
// been granted to another client by then and the break shows. Half a TTL
// was shorter than that reconnection (a lab TTL of 1 s against about a
// second after a moved address), and the holder wrote alone whatever
// became of its lock.
func holdUp(env *Env, k nemesis.Kind) time.Duration {
	wait := handOffWait(env)
	if r, ok := k.(nemesis.Reconnecting); ok && !env.Impl.Caps.Expiry {
		wait = max(wait, r.Reconnect())
	}
	return wait
}

// withinLease shortens wait to end when a quarter of w's lease is left,
// from its last grant in its history: a holder whose fault leaves the lock
// held (a server down past the max TTL) must write within its own lease.
// Half a TTL keeps its write within the lease only when the fault strikes
// right after the grant; a holder that reached its failpoint late (a
// loaded machine) and then waited half a TTL wrote past its lease, a pause
// the scenario does not mean: redlock-restart-delayed came out unsafe in
// container mode so (nemesis.InLease).
func withinLease(env *Env, w *Worker, wait time.Duration) time.Duration {
	grant, ok := lastEvent(w, lin.Acquired)
	if !ok {
		return wait
	}
	left := time.Duration(grant + int64(env.TTL*3/4) - lin.Now())
	return max(0, min(wait, left))
}

// handOff lets the client in slot go on from its failpoint once another
// client has read the resource after since, or wait passed from now, and
// leave the run after that section. Waiting for the read, not just the
// grant, makes the collision certain when the lock failed: both clients
// have read the same value before either writes, so the holder's write
// and the other's are one lost update, whichever lands first. A read at
// any time after since counts, though the wait is bounded from now: a
// fault that took a while to complete (a server killed, then restarted)
// let a new holder in while the lab was still confirming the server was
// up, and counting only reads after that missed it; the holder then
// waited for that holder's next section, whose higher token made the
// resource refuse the holder's write and hid the repeated token.
func (x *system) handOff(ctx context.Context, slot int, since int64, wait time.Duration) error {
	return x.handOffWhen(ctx, slot, since, wait, nil)
}

// handOffWhen is handOff, with ready, when not nil, called after the read
// (or the wait) and before the client goes on: the client goes on only
// once ready returns, and not at all when it fails.
func (x *system) handOffWhen(ctx context.Context, slot int, since int64, wait time.Duration, ready func(context.Context) error) error {
	x.mu.Lock()
	holder := x.slots[slot]
	var others []*Worker
	for _, w := range x.all {
		if w != holder {
			others = append(others, w)
		}
	}
	x.mu.Unlock()
	waitFor(ctx, others, lin.Read, since, wait)
	if ready != nil {
		if err := ready(ctx); err != nil {
			return err
		}
	}
	return holder.ContinueThenLeave()
}
