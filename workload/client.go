// Package workload is what the lab's clients do: the read-work-write
// critical section on the protected resource, recorded event by event for
// the checker, and the contention loop that drives clients against one key.
// The same code runs in the test process (goroutines) and in worker
// processes (package runner). It must not import scenarios, runner, nemesis
// or checker: data flows from workload up to them, never back.
package workload

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
)

// Client is one lock client doing critical sections on the protected
// resource and recording each in the history. The same code runs inside the
// test process (goroutines) and inside worker processes (faults).
type Client struct {
	ID      int
	Key     string
	Locker  impls.Locker
	Counter *resource.Counter
	Rec     *lin.Recorder
	// Fenced makes the resource check the lease's fencing token, where the
	// lock issues one.
	Fenced bool
	// Work is how long the critical section works between read and write.
	Work func() time.Duration
	// Hit is called at the critical section's failpoints (may be nil).
	Hit func(name string)
	// Limit, when positive, makes the section a coupon sale: it writes only
	// while the counter (coupons sold) is below Limit (the stock).
	Limit int64
	// WatchLost records in the history when the lock tells the holder it
	// lost the lock (lin.Lost). Only a lock that declares lost-notify can,
	// and only the fault runs' figures read it: elsewhere (the benchmark's
	// sections) it would be a goroutine per section for nothing.
	WatchLost bool

	op    int64
	asked int64 // when the acquire now under way was asked for (Asking)
}

// Asking stamps the moment this client asks for the lock, for the grant
// or refusal that ends the acquire to record (lin.Event.Asked), and
// returns it: a client that waits in the lock's queue is trying to take
// it all along, which the checker's danger window counts.
func (c *Client) Asking() int64 {
	c.asked = lin.Now()
	return c.asked
}

func (c *Client) hit(name string) {
	if c.Hit != nil {
		c.Hit(name)
	}
}

// Section acquires the lock, does one read-work-write critical section and
// releases. It returns the acquire error, if any (no section ran then).
func (c *Client) Section(ctx context.Context) error {
	c.Asking()
	lease, err := c.Locker.Acquire(ctx, c.Key)
	if err != nil {
		return err
	}
	c.Run(ctx, lease)
	return nil
}

// Run does the critical section under a lease already held, then releases it.
func (c *Client) Run(ctx context.Context, lease impls.Lease) {
	c.granted(lease)
	_ = c.work(ctx, lease) // the history holds the release's error
}

// granted records a grant in the history.
func (c *Client) granted(lease impls.Lease) {
	tok, _ := lease.Token()
	c.Rec.Record(lin.Event{Kind: lin.Acquired, Client: c.ID, Token: tok, Asked: c.asked})
	c.asked = 0
}

// work does the critical section under lease, whose grant is recorded,
// then releases it, and returns the release's error.
func (c *Client) work(ctx context.Context, lease impls.Lease) error {
	tok, hasTok := lease.Token()
	// The moment the lock tells its holder the lock is lost goes in the
	// history (the holder does not act on it: a client that writes
	// without asking is what the lab judges); a lock may close Lost on
	// its own release, which is not a loss, so the watch ends first.
	releasing := make(chan struct{})
	if c.WatchLost {
		go func() {
			select {
			case <-lease.Lost():
				select {
				case <-releasing:
				default:
					c.Rec.Record(lin.Event{Kind: lin.Lost, Client: c.ID, Token: tok})
				}
			case <-releasing:
			}
		}()
	}
	c.hit(failpoint.AfterAcquire)
	c.op++
	fenced := c.Fenced && hasTok
	ev := lin.Event{Client: c.ID, Op: c.op, Token: tok, Fenced: fenced}
	ret := func(st lin.Status, v int64) {
		e := ev
		e.Kind, e.Status, e.Value = lin.Return, st, v
		c.Rec.Record(e)
	}
	call := ev
	call.Kind = lin.Call
	c.Rec.Record(call)

	v, err := c.Counter.Read(ctx, tok, fenced)
	switch {
	case errors.Is(err, resource.ErrRefused):
		ret(lin.Refused, 0)
	case err != nil:
		// No value came back, so this client will not write.
		ret(lin.Aborted, 0)
	default:
		read := ev
		read.Kind, read.Value = lin.Read, v
		c.Rec.Record(read)
		if c.Work != nil {
			time.Sleep(c.Work())
		}
		c.hit(failpoint.InWork)
		if c.Limit > 0 && v >= c.Limit {
			ret(lin.Aborted, 0) // sold out: nothing to write
			break
		}
		if d, ok := lease.(impls.Deadliner); ok && time.Now().After(d.ValidUntil()) {
			// A careful Redlock client does no work past its validity time.
			ret(lin.Aborted, 0)
			break
		}
		// Past every check: a pause here lands the write whatever the lease.
		c.hit(failpoint.InCriticalSection)
		switch err := c.Counter.Write(ctx, tok, fenced, v+1); {
		case errors.Is(err, resource.ErrRefused):
			ret(lin.Refused, 0)
		case err != nil:
			ret(lin.Unknown, 0)
		default:
			ret(lin.OK, v+1)
		}
	}
	c.hit(failpoint.BeforeRelease)
	close(releasing)
	rel := lin.Event{Kind: lin.Released, Client: c.ID, Token: tok}
	err = lease.Release(ctx)
	if err != nil {
		rel.Text = err.Error()
	}
	c.Rec.Record(rel)
	return err
}
