package workload

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Contention is how a contention run ended, from the clients' side.
type Contention struct {
	// Stuck is the first acquire that waited the whole bound without the
	// lock while the run itself was still live: a gap in grants for the
	// checker to judge, not an error of the run.
	Stuck error
	// Failures counts the acquires that returned an error (Stuck included).
	Failures int
}

// Contend has every client race for its key, one section after another,
// until sections sections have started between them, ctx ends, an acquire
// is stuck for longer than bound, or more than a tenth of the sections
// failed: past that the errors are a backend's, not contention, and going
// on would only repeat them.
func Contend(ctx context.Context, clients []*Client, sections int, bound time.Duration) Contention {
	return contend(ctx, clients, sections, time.Time{}, boundedSection(bound))
}

// boundedSection is one Section whose acquire waits at most bound.
func boundedSection(bound time.Duration) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		actx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		return c.Section(actx)
	}
}

// contend runs Contend's loop with section as each client's section; a
// section bounds its own acquires. No section starts after until, unless
// it is zero.
func contend(ctx context.Context, clients []*Client, sections int, until time.Time,
	section func(context.Context, *Client) error) Contention {
	var (
		started atomic.Int64
		mu      sync.Mutex
		res     Contention
		wg      sync.WaitGroup
	)
	for _, c := range clients {
		wg.Add(1)
		go func(c *Client) {
			defer wg.Done()
			for started.Add(1) <= int64(sections) && ctx.Err() == nil && (until.IsZero() || time.Now().Before(until)) {
				err := section(ctx, c)
				if err == nil {
					continue
				}
				mu.Lock()
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && res.Stuck == nil {
					res.Stuck = err
				}
				res.Failures++
				give := res.Stuck != nil || res.Failures > sections/10
				mu.Unlock()
				if give {
					return
				}
			}
		}(c)
	}
	wg.Wait()
	return res
}
