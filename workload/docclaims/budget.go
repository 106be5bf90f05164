package docclaims

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// BudgetOptions configure the waiting-budget measurement: clients contend
// for one redlock, each waiting at most Budget for a grant, as
// 004_84007c392b46b35c.txt has a client give up after half the TTL.
type BudgetOptions struct {
	Redis    []string
	Clients  int
	TTL      time.Duration
	Budget   time.Duration
	Hold     time.Duration // each holder's work
	Duration time.Duration
}

// BudgetRow is one setting's outcome.
type BudgetRow struct {
	Clients  int    `json:"clients"`
	TTL      string `json:"ttl"`
	Budget   string `json:"budget"`
	Hold     string `json:"hold"`
	Duration string `json:"duration"`
	Granted  int    `json:"granted"`
	GaveUp   int    `json:"gave_up"`
	// Wait is the granted acquires' wait.
	Wait Latency `json:"wait"`
	// LeftMS is the least validity a grant still had when it came.
	LeftMS float64 `json:"least_validity_left_ms"`
}

// MeasureBudget runs the contention for opt.Duration.
func MeasureBudget(ctx context.Context, opt BudgetOptions) (BudgetRow, error) {
	spec, err := impls.Lookup(Redlock)
	if err != nil {
		return BudgetRow{}, err
	}
	row := BudgetRow{Clients: opt.Clients, TTL: opt.TTL.String(), Budget: opt.Budget.String(), Hold: opt.Hold.String(), Duration: opt.Duration.String(), LeftMS: -1}
	var (
		mu      sync.Mutex
		waits   []time.Duration
		failure error
		wg      sync.WaitGroup
	)
	key := fmt.Sprintf("budget-%s-%s", opt.Budget, opt.Hold)
	end := time.Now().Add(opt.Duration)
	for i := range opt.Clients {
		l, err := spec.New(impls.Config{Servers: topology.At(spec.Backend.Kind, opt.Redis...), TTL: opt.TTL, ClientID: fmt.Sprintf("budget-%d", i)})
		if err != nil {
			return BudgetRow{}, err
		}
		defer l.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				actx, cancel := context.WithTimeout(ctx, opt.Budget)
				t0 := time.Now()
				lease, err := l.Acquire(actx, key)
				waited := time.Since(t0)
				cancel()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, impls.ErrHeld) && !errors.Is(err, impls.ErrUnknown) && !errors.Is(err, impls.ErrBackend) {
						mu.Lock()
						failure = fmt.Errorf("client %d: %w", i, err)
						mu.Unlock()
						return
					}
					mu.Lock()
					row.GaveUp++
					mu.Unlock()
					continue
				}
				left := time.Duration(-1)
				if d, ok := lease.(impls.Deadliner); ok {
					left = time.Until(d.ValidUntil())
				}
				mu.Lock()
				row.Granted++
				waits = append(waits, waited)
				if left >= 0 && (row.LeftMS < 0 || ms(left) < row.LeftMS) {
					row.LeftMS = ms(left)
				}
				mu.Unlock()
				time.Sleep(opt.Hold)
				if err := lease.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, impls.ErrNotHeld) && !errors.Is(err, impls.ErrUnknown) {
					mu.Lock()
					failure = fmt.Errorf("client %d release: %w", i, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return BudgetRow{}, failure
	}
	row.Wait = summarise(waits)
	return row, nil
}
