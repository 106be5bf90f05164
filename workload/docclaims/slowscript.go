package docclaims

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/redislock" // registers redis-setnx-px
	"github.com/locklab/locklab/topology"
)

// LeaseLock is the single-node lock whose lease the slow script meets.
const LeaseLock = "redis-setnx-px"

// busyScript spins, by Redis's own clock, for ARGV[1] microseconds: a
// script that does nothing but take time, as a slow one does. Redis runs
// a script as one command (000_4c93f78eaeec54ee.txt quotes its manual: no
// other command runs meanwhile).
var busyScript = redis.NewScript(`
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
while true do
  t = redis.call('TIME')
  if t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) then return 1 end
end`)

// ScriptOptions configure the slow-script measurement.
type ScriptOptions struct {
	Redis   string // one node, host:port
	Clients int    // other clients, each sending GET in a loop
	Window  time.Duration
	Script  time.Duration // how long the script spins, started mid-window
	// LeaseTTL is the lock's lease, taken just before the script starts
	// and refreshed once while it runs.
	LeaseTTL time.Duration
}

// ScriptRow is the other clients' command latency over one window.
type ScriptRow struct {
	Script bool    `json:"script"`
	Others Latency `json:"others"`
	// ScriptMS is how long the script's EVAL took, seen by its client.
	ScriptMS float64 `json:"script_ms,omitempty"`
	// HeldThrough counts the GETs in flight through the script: sent
	// before it had run a quarter of its set time, answered only after it
	// had run nine tenths (each client has one GET in flight at a time).
	// Without the script, the same span of the window is counted, as the
	// control.
	HeldThrough int `json:"held_through"`
}

// ScriptLease is what the script did to a lock held on the same server,
// or, without the script, what the same refresh does.
type ScriptLease struct {
	Script bool   `json:"script"`
	TTL    string `json:"ttl"`
	// RefreshSentMS is when, after the grant, the holder sent its refresh;
	// RefreshMS how long the refresh took to answer.
	RefreshSentMS float64 `json:"refresh_sent_ms"`
	RefreshMS     float64 `json:"refresh_ms"`
	// Refused: the refresh found the lease gone (impls.ErrNotHeld).
	Refused bool   `json:"refused"`
	Error   string `json:"error,omitempty"`
	// TakenByOther: a second client's attempt right after the refresh won.
	TakenByOther bool `json:"taken_by_other"`
}

// ScriptResult is the measurement.
type ScriptResult struct {
	Clients int           `json:"clients"`
	Window  string        `json:"window"`
	Script  string        `json:"script"`
	Rows    []ScriptRow   `json:"rows"`
	Leases  []ScriptLease `json:"leases"`
}

// MeasureSlowScript times other clients' GETs over a window without the
// script and over one with it, then holds a lease across the script.
func MeasureSlowScript(ctx context.Context, opt ScriptOptions) (ScriptResult, error) {
	rdb := redis.NewClient(&redis.Options{Addr: opt.Redis, ReadTimeout: 10 * time.Second})
	defer rdb.Close()
	if err := busyScript.Load(ctx, rdb).Err(); err != nil {
		return ScriptResult{}, fmt.Errorf("load the busy script: %w", err)
	}
	res := ScriptResult{Clients: opt.Clients, Window: opt.Window.String(), Script: opt.Script.String()}
	for _, withScript := range []bool{false, true} {
		row, err := scriptWindow(ctx, rdb, opt, withScript)
		if err != nil {
			return ScriptResult{}, err
		}
		res.Rows = append(res.Rows, row)
	}
	for _, withScript := range []bool{false, true} {
		lease, err := scriptLease(ctx, rdb, opt, withScript)
		if err != nil {
			return ScriptResult{}, err
		}
		res.Leases = append(res.Leases, lease)
	}
	return res, nil
}

func scriptWindow(ctx context.Context, rdb *redis.Client, opt ScriptOptions, withScript bool) (ScriptRow, error) {
	begin := time.Now()
	wctx, cancel := context.WithTimeout(ctx, opt.Window)
	defer cancel()
	var (
		mu      sync.Mutex
		samples []time.Duration
		spans   [][2]time.Duration // each GET's send and answer, from the window's start
		wg      sync.WaitGroup
		failure error
	)
	for i := range opt.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: opt.Redis, ReadTimeout: 10 * time.Second, PoolSize: 1})
			defer c.Close()
			key := fmt.Sprintf("other-%d", i)
			var mine []time.Duration
			var mySpans [][2]time.Duration
			for wctx.Err() == nil {
				t0 := time.Now()
				// Not wctx: a GET stuck behind the script must be timed
				// to its answer, not cut at the window's end.
				if err := c.Get(ctx, key).Err(); err != nil && !errors.Is(err, redis.Nil) {
					mu.Lock()
					failure = fmt.Errorf("client %d GET: %w", i, err)
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t0))
				mySpans = append(mySpans, [2]time.Duration{t0.Sub(begin), time.Since(begin)})
			}
			mu.Lock()
			samples = append(samples, mine...)
			spans = append(spans, mySpans...)
			mu.Unlock()
		}()
	}
	row := ScriptRow{Script: withScript}
	sent := (opt.Window - opt.Script) / 2
	if withScript {
		select {
		case <-time.After(sent):
		case <-ctx.Done():
		}
		t0 := time.Now()
		if err := busyScript.Run(ctx, rdb, nil, opt.Script.Microseconds()).Err(); err != nil {
			cancel()
			wg.Wait()
			return ScriptRow{}, fmt.Errorf("the busy script: %w", err)
		}
		row.ScriptMS = ms(time.Since(t0))
		sent = t0.Sub(begin)
	}
	wg.Wait()
	if failure != nil {
		return ScriptRow{}, failure
	}
	row.Others = summarise(samples)
	for _, sp := range spans {
		if sp[0] <= sent+opt.Script/4 && sp[1] >= sent+opt.Script*9/10 {
			row.HeldThrough++
		}
	}
	return row, nil
}

// scriptLease takes the lock with a lease shorter than the script, starts
// the script, and has the holder refresh early in its lease, as a
// watchdog would: the refresh waits behind the script, and by the time
// Redis reads it the lease has run out. Without the script, the same
// refresh is the control.
func scriptLease(ctx context.Context, rdb *redis.Client, opt ScriptOptions, withScript bool) (ScriptLease, error) {
	spec, err := impls.Lookup(LeaseLock)
	if err != nil {
		return ScriptLease{}, err
	}
	cfg := impls.Config{Servers: topology.At(spec.Backend.Kind, opt.Redis), TTL: opt.LeaseTTL}
	cfg.ClientID = "holder"
	holder, err := spec.New(cfg)
	if err != nil {
		return ScriptLease{}, err
	}
	defer holder.Close()
	cfg.ClientID = "other"
	other, err := spec.New(cfg)
	if err != nil {
		return ScriptLease{}, err
	}
	defer other.Close()
	key := fmt.Sprintf("script-lease-%v", withScript)
	granted := time.Now()
	lease, err := holder.TryAcquire(ctx, key)
	if err != nil {
		return ScriptLease{}, fmt.Errorf("take the lease: %w", err)
	}
	done := make(chan error, 1)
	if withScript {
		go func() { done <- busyScript.Run(ctx, rdb, nil, opt.Script.Microseconds()).Err() }()
	} else {
		done <- nil
	}
	// Long enough for the script's EVAL to reach Redis first.
	time.Sleep(opt.LeaseTTL / 5)
	out := ScriptLease{Script: withScript, TTL: opt.LeaseTTL.String(), RefreshSentMS: ms(time.Since(granted))}
	t0 := time.Now()
	rerr := lease.Refresh(ctx)
	out.RefreshMS = ms(time.Since(t0))
	if err := <-done; err != nil {
		return ScriptLease{}, fmt.Errorf("the busy script: %w", err)
	}
	if rerr != nil {
		out.Refused, out.Error = errors.Is(rerr, impls.ErrNotHeld), rerr.Error()
	}
	if l2, err := other.TryAcquire(ctx, key); err == nil {
		out.TakenByOther = true
		l2.Release(ctx)
	} else if !errors.Is(err, impls.ErrHeld) {
		return ScriptLease{}, fmt.Errorf("the other client's attempt: %w", err)
	}
	lease.Release(ctx)
	return out, nil
}
