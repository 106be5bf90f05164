package docclaims

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// DownOptions configure the acquire with nodes of five stalled.
type DownOptions struct {
	Redis    []string // the five nodes, host:port
	TTL      time.Duration
	Acquires int // per row
	// Stall freezes node i (SIGSTOP) and Wake thaws it; the caller owns
	// the servers.
	Stall, Wake func(i int) error
}

// DownRow is one count of stalled nodes.
type DownRow struct {
	Down int `json:"down"`
	// Acquire is the time of each granted Acquire; Cycle adds its Release.
	Acquire Latency `json:"acquire"`
	Cycle   Latency `json:"acquire_and_release"`
	// Refused counts acquires that returned an error, and RefusedIn how
	// long the first such took to say so.
	Refused   int     `json:"refused"`
	RefusedMS float64 `json:"refused_ms,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// DownResult is the measurement: one row per count of stalled nodes.
type DownResult struct {
	Nodes       int       `json:"nodes"`
	TTL         string    `json:"ttl"`
	NodeTimeout string    `json:"node_timeout"`
	Rows        []DownRow `json:"rows"`
}

// MeasureNodesDown takes and releases an uncontended redlock opt.Acquires
// times with none, one, two and three of its five nodes stalled, the last
// nodes first, waking them all at the end.
func MeasureNodesDown(ctx context.Context, opt DownOptions, nodeTimeout time.Duration) (DownResult, error) {
	spec, err := impls.Lookup(Redlock)
	if err != nil {
		return DownResult{}, err
	}
	res := DownResult{Nodes: len(opt.Redis), TTL: opt.TTL.String(), NodeTimeout: nodeTimeout.String()}
	var stalled []int
	defer func() {
		for _, i := range stalled {
			opt.Wake(i)
		}
	}()
	for down := 0; down <= len(opt.Redis)/2+1; down++ {
		if down > 0 {
			i := len(opt.Redis) - down
			if err := opt.Stall(i); err != nil {
				return DownResult{}, fmt.Errorf("stall node %d: %w", i, err)
			}
			stalled = append(stalled, i)
		}
		// A new client per row: connections to a stalled node are not
		// carried from one row into the next.
		l, err := spec.New(impls.Config{Servers: topology.At(spec.Backend.Kind, opt.Redis...), TTL: opt.TTL, ClientID: fmt.Sprintf("down-%d", down)})
		if err != nil {
			return DownResult{}, err
		}
		row := DownRow{Down: down}
		var acq, cyc []time.Duration
		for n := range opt.Acquires {
			key := fmt.Sprintf("down-%d-%d", down, n)
			t0 := time.Now()
			lease, err := l.Acquire(ctx, key)
			took := time.Since(t0)
			if err != nil {
				if ctx.Err() != nil {
					l.Close()
					return DownResult{}, ctx.Err()
				}
				if row.Refused == 0 {
					row.RefusedMS, row.Error = ms(took), kindOf(err)
				}
				row.Refused++
				continue
			}
			acq = append(acq, took)
			if err := lease.Release(ctx); err != nil {
				l.Close()
				return DownResult{}, fmt.Errorf("%d down: release: %w", down, err)
			}
			cyc = append(cyc, time.Since(t0))
		}
		l.Close()
		row.Acquire, row.Cycle = summarise(acq), summarise(cyc)
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// kindOf names an acquire's failure by the lab's error kinds.
func kindOf(err error) string {
	for _, k := range []error{impls.ErrHeld, impls.ErrBackend, impls.ErrUnknown} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return err.Error()
}
