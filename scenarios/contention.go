package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
)

func init() {
	Register(Scenario{
		Name:    "contention",
		Summary: "clients race for one key doing read-work-write critical sections; no faults",
		Needs:   func(impls.Spec) cluster.Needs { return cluster.Needs{} },
		Run:     runContention,
	})
}

// stuckBound is how long one acquire may wait before the run counts as
// stuck: far longer than any healthy hand-off, a few TTLs.
func (e *Env) stuckBound() time.Duration { return 5*e.TTL + 10*time.Second }

func runContention(ctx context.Context, env *Env) (*Outcome, error) {
	clients := make([]*Client, env.Clients)
	for i := range clients {
		c, err := env.NewClient(i, env.Config(i))
		if err != nil {
			for _, c := range clients[:i] {
				CloseClient(c)
			}
			return nil, err
		}
		clients[i] = c
	}
	defer func() {
		for _, c := range clients {
			CloseClient(c)
		}
	}()
	var (
		started  atomic.Int64
		mu       sync.Mutex
		stuck    error
		failures int
		wg       sync.WaitGroup
	)
	for _, c := range clients {
		wg.Add(1)
		go func(c *Client) {
			defer wg.Done()
			for started.Add(1) <= int64(env.Sections) && ctx.Err() == nil {
				actx, cancel := context.WithTimeout(ctx, env.stuckBound())
				err := c.Section(actx)
				cancel()
				if err == nil {
					continue
				}
				mu.Lock()
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					stuck = err
				}
				failures++
				give := stuck != nil || failures > env.Sections/10
				mu.Unlock()
				if give {
					return
				}
			}
		}(c)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Outcome{Clients: env.Clients}
	if stuck != nil {
		// The gap in grants this left is the checker's to judge.
		out.Detail = fmt.Sprintf("an acquire waited %v without the lock: %v", env.stuckBound(), stuck)
	} else if failures > env.Sections/10 {
		return nil, fmt.Errorf("%d acquires failed (not contention, errors): see the servers' logs", failures)
	}
	if err := env.Judge(out); err != nil {
		return nil, err
	}
	return out, nil
}
