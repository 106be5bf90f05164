package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// NestedSection is a section whose code takes the lock again while it
// holds it, as a function that holds a lock calls another that takes the
// same lock: the outer grant; the same client's inner acquire; a section
// under the inner grant and its release; then a section under the outer
// grant, whose code trusts that it still holds the lock because it has not
// released it; and the outer release. A reentrant lock grants the inner
// acquire at once and frees the lock at the outer release only. A lock
// that is not reentrant makes its holder wait on itself: until its own
// lease runs out, when the inner grant is a new one and the inner release
// leaves the outer section unprotected, or for ever.
//
// It returns how long the inner acquire took; whether the outer release
// found the lock no longer held (impls.ErrNotHeld), so that the outer
// section ran without it; and the outer acquire's error or the inner's.
// Each acquire waits at most bound. A client whose inner acquire failed
// releases the outer grant, as code whose call failed would.
func (c *Client) NestedSection(ctx context.Context, bound time.Duration) (waited time.Duration, unprotected bool, err error) {
	actx, cancel := context.WithTimeout(ctx, bound)
	outer, err := c.Locker.Acquire(actx, c.Key)
	cancel()
	if err != nil {
		return 0, false, err
	}
	c.granted(outer)
	start := time.Now()
	ictx, cancel := context.WithTimeout(ctx, bound)
	inner, err := c.Locker.Acquire(ictx, c.Key)
	cancel()
	waited = time.Since(start)
	if err != nil {
		tok, _ := outer.Token()
		rel := lin.Event{Kind: lin.Released, Client: c.ID, Token: tok,
			Text: fmt.Sprintf("the re-entry failed after %v: %v", waited.Round(time.Millisecond), err)}
		if rerr := outer.Release(ctx); rerr != nil {
			rel.Text += "; the release: " + rerr.Error()
		}
		c.Rec.Record(rel)
		return waited, false, fmt.Errorf("re-entry: %w", err)
	}
	c.Run(ctx, inner)
	// The outer code goes on working after its inner call returned, for
	// longer than any waiter sleeps between polls (impls.DefaultBackoff),
	// so that where the inner release freed the lock the outer section is
	// met by another holder in every run, not by luck: its read-modify-write
	// took well under a millisecond, and a CI run once saw no overlap in 6
	// unprotected outer sections.
	saved := c.Work
	c.Work = func() time.Duration { return outerWork }
	defer func() { c.Work = saved }()
	return waited, errors.Is(c.work(ctx, outer), impls.ErrNotHeld), nil
}

// outerWork is how long a nested section's outer part works between its
// read and its write: past the longest poll interval of a waiting client.
const outerWork = impls.PollMaxWait + 8*time.Millisecond

// Reentries is how a nested contention run ended: Contention, how long
// each successful inner acquire took, and how many outer releases found
// the lock no longer held: outer sections that ran unprotected.
type Reentries struct {
	Contention
	Waits       []time.Duration
	Unprotected int
}

// ContendNested is Contend with client 0's sections NestedSections, as
// one code path of a service re-enters the lock while the others take it
// once, and no section started after until: a lock that is not reentrant
// spends a lease per re-entry, and a run must end while it still shows
// something.
func ContendNested(ctx context.Context, clients []*Client, sections int, bound time.Duration, until time.Time) Reentries {
	var (
		mu  sync.Mutex
		res Reentries
	)
	once := boundedSection(bound)
	res.Contention = contend(ctx, clients, sections, until, func(ctx context.Context, c *Client) error {
		if c != clients[0] {
			return once(ctx, c)
		}
		w, unprotected, err := c.NestedSection(ctx, bound)
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			res.Waits = append(res.Waits, w)
		}
		if unprotected {
			res.Unprotected++
		}
		return err
	})
	return res
}
