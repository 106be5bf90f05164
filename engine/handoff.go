package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/checker"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/workload"
)

// runHandOff is the release-hand-off workload. It exists because a lock
// that keeps itself held after a release, so that only the releasing
// client can take it again, passed every other cell: in contention the
// releaser simply kept winning, the grants never paused, and the checker
// saw progress (the mutant pg-advisory-release-keeps-lock, impls/mutant).
// Here client 0, the releaser, leaves after its one section while staying
// connected, so the others' progress rests on the release alone.
func runHandOff(ctx context.Context, env *Env) (*Outcome, error) {
	clients, closeClients, err := env.NewClients()
	if err != nil {
		return nil, err
	}
	defer closeClients()
	if len(clients) < 2 {
		return nil, fmt.Errorf("release-hand-off needs at least 2 clients, got %d", len(clients))
	}

	// Client 0 takes the lock alone, so every other client starts out
	// waiting behind it.
	actx, cancel := context.WithTimeout(ctx, env.AcquireBound())
	first, err := clients[0].Locker.Acquire(actx, env.Key)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("client 0's first acquire: %w", err)
	}

	// A waiter that is not granted within twice the checker's bound gives
	// up: by then the checker has what it needs to call the run stuck.
	wait := 2 * checker.Bound(env.TTL)
	w := &handOffWaiters{sections: env.Sections, bound: wait}
	w.started.Store(1) // client 0's section
	for _, c := range clients[1:] {
		w.wg.Add(1)
		w.waiting.Add(1)
		go w.run(ctx, c)
	}
	w.waiting.Wait()
	// Give the waiters' first requests time to reach the server, so they
	// are queued (or polling) when the release comes; this only widens the
	// window, the verdict does not depend on it.
	time.Sleep(env.TTL / 10)

	clients[0].Run(ctx, first)
	env.FaultAt(lin.Injection{Kind: holderRelease, Target: "client-0", Clients: []int{0},
		Note: "released; stays idle, its connections open"})
	w.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env.Phase(PhaseWorkload)
	out := &Outcome{Clients: env.Clients}
	switch {
	case w.gaveUp != nil:
		// The missing grants are the checker's to judge.
		out.Detail = fmt.Sprintf("a waiter gave up after %v without the lock: %v", wait, w.gaveUp)
	case w.failures > env.Sections/10:
		return nil, fmt.Errorf("%d acquires failed (not contention, errors): see the servers' logs", w.failures)
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}

// handOffWaiters are the clients waiting behind client 0: between them
// they run the rest of the run's sections, each acquire bounded.
type handOffWaiters struct {
	sections int
	bound    time.Duration

	started atomic.Int64   // sections begun, client 0's included
	waiting sync.WaitGroup // waiters whose first acquire is not yet under way
	wg      sync.WaitGroup // waiters still running

	mu       sync.Mutex
	failures int
	gaveUp   error
}

// run is one waiter: sections until the run has its count, giving up at
// the first acquire not granted within the bound or once more than a
// tenth of the sections failed.
func (w *handOffWaiters) run(ctx context.Context, c *workload.Client) {
	defer w.wg.Done()
	once := sync.OnceFunc(w.waiting.Done)
	defer once()
	for w.started.Add(1) <= int64(w.sections) && ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, w.bound)
		// The acquire is under way (or about to be) once the
		// goroutine got here; the release waits for all of them.
		once()
		err := c.Section(actx)
		cancel()
		if err == nil {
			continue
		}
		w.mu.Lock()
		w.failures++
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			w.gaveUp = err
		}
		give := w.gaveUp != nil || w.failures > w.sections/10
		w.mu.Unlock()
		if give {
			return
		}
	}
}

// holderRelease names, in the history, the release-hand-off workload's one
// act that the checker times the hand-off from: the holder released and
// stays idle, connected; the others' progress rests on that release
// alone. It is the workload's own step, not a fault: the clients share one
// process, where no nemesis fault reaches, and nothing is healed.
const holderRelease = "holder-release"
