package benchmark

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
	"github.com/locklab/locklab/topology"
	"github.com/locklab/locklab/workload"
)

// pair is one acquire-release of one client, stamped with the process's
// monotonic clock (time.Time keeps its monotonic reading), so stamps from
// different goroutines compare.
type pair struct {
	client       int
	start        time.Time // Acquire called
	acquired     time.Time // Acquire returned the lease
	releaseStart time.Time // the holder began to release
	released     time.Time // Release returned
}

// load describes one measurement: how many clients, on which keys, for how
// long, and whether each holder works on the protected resource.
type load struct {
	spec     impls.Spec
	clients  int
	keys     func(client int) string
	section  bool // a read-write critical section on the resource under the lock
	duration time.Duration
	// between runs after the clients are built and before they start, and
	// again after they are closed: the server counters are read there, so
	// connection set-up is not charged to the lock.
	before, after func(ctx context.Context) error
	// cpu: sample the clients' and the lock servers' CPU time around the
	// window (cpuUse).
	cpu bool
}

// run is what one measurement saw.
type run struct {
	pairs    []pair // completed within the measured window, by acquire time
	granted  int    // every successful acquire, the drain's included
	errors   int    // acquires or releases that failed (not counted as pairs)
	lastErr  error
	duration time.Duration
	// clientCPU and serverCPU are µs of CPU per grant, drain included
	// (load.cpu); serverCPU only where serverCPUOK.
	clientCPU, serverCPU float64
	cpuOK, serverCPUOK   bool
}

func (r *run) rate() float64 { return float64(len(r.pairs)) / r.duration.Seconds() }

func (r *run) waits() []time.Duration {
	out := make([]time.Duration, len(r.pairs))
	for i, p := range r.pairs {
		out[i] = p.acquired.Sub(p.start)
	}
	return out
}

// lockClient is one client of a measurement: its own Locker and, for
// critical sections, its own connection to the protected resource.
type lockClient struct {
	locker  impls.Locker
	section *workload.Client
	relAt   time.Time // set by the before-release hook of the section
}

func (b *bench) newClients(l load) ([]*lockClient, error) {
	out := make([]*lockClient, 0, l.clients)
	closeAll := func() {
		for _, c := range out {
			c.close()
		}
	}
	rec := lin.NewRecorder(nil)
	for i := 0; i < l.clients; i++ {
		lk, err := l.spec.New(b.config(i))
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("new %s client %d: %w", l.spec.Name, i, err)
		}
		c := &lockClient{locker: lk}
		if l.section {
			key := l.keys(i)
			c.section = &workload.Client{
				ID: i, Key: key, Locker: lk, Rec: rec,
				Counter: resource.New(b.topo.ResourceAddr, key),
				Hit: func(name string) {
					if name == failpoint.BeforeRelease {
						c.relAt = time.Now()
					}
				},
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func (c *lockClient) close() {
	c.locker.Close()
	if c.section != nil {
		c.section.Counter.Close()
	}
}

// measure runs one load. Every client loops acquire, (critical section),
// release until the window closes; a client that holds the lock when it
// closes still releases it, and waiters still waiting are let through (the
// drain), but only pairs that completed inside the window count.
func (b *bench) measure(ctx context.Context, l load) (*run, error) {
	clients, err := b.newClients(l)
	if err != nil {
		return nil, err
	}
	closed := false
	closeAll := func() {
		if !closed {
			for _, c := range clients {
				c.close()
			}
			closed = true
		}
	}
	defer closeAll()
	// Warm up: each client opens its connections (and loads its scripts)
	// with one try on a key of its own, one client at a time, so that
	// connection set-up is not measured, nor counted as the lock's cost, nor
	// piled up by 32 clients dialling at once.
	for i, c := range clients {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if lease, err := c.locker.TryAcquire(wctx, l.keys(i)+"-warm"); err == nil {
			_ = lease.Release(wctx)
		}
		if c.section != nil {
			_, _ = c.section.Counter.Value(wctx)
		}
		cancel()
	}
	if l.before != nil {
		if err := l.before(ctx); err != nil {
			return nil, err
		}
	}
	// The drain bound: a waiter queued behind every other client, each
	// holding for a round or two, or a lease left by a failed release to
	// expire.
	drain := 2*b.opts.TTL + 10*time.Second
	var (
		mu     sync.Mutex
		res    = &run{duration: l.duration}
		wg     sync.WaitGroup
		gate   = make(chan struct{})
		stopAt time.Time
	)
	for i, c := range clients {
		wg.Add(1)
		go func(i int, c *lockClient) {
			defer wg.Done()
			<-gate
			key := l.keys(i)
			actx, cancel := context.WithDeadline(ctx, stopAt.Add(drain))
			defer cancel()
			var mine []pair
			var errs, grants int
			var last error
			for time.Now().Before(stopAt) {
				p := pair{client: i, start: time.Now()}
				lease, err := c.locker.Acquire(actx, key)
				if err != nil {
					errs++
					last = err
					if actx.Err() != nil {
						break
					}
					time.Sleep(time.Millisecond) // a failing server must not be hammered in a hot loop
					continue
				}
				p.acquired = time.Now()
				grants++
				if c.section != nil {
					c.section.Run(actx, lease)
					p.releaseStart = c.relAt
				} else {
					p.releaseStart = time.Now()
					if err := lease.Release(actx); err != nil {
						errs++
						last = err
						continue
					}
				}
				p.released = time.Now()
				if !p.released.After(stopAt) {
					mine = append(mine, p)
				}
			}
			mu.Lock()
			res.pairs = append(res.pairs, mine...)
			res.errors += errs
			res.granted += grants
			if last != nil {
				res.lastErr = last
			}
			mu.Unlock()
		}(i, c)
	}
	// The processes to count are found before the window, so the scan of
	// every process is not charged to the clients; inside it only their
	// threads' run times are read.
	var sides *cpuSides
	var cpuBefore cpuUse
	if l.cpu {
		if sides, err = newCPUSides(b.lockPIDs(l.spec), b.allPIDs()); err != nil {
			return nil, err
		}
		cpuBefore = sides.sample()
	}
	stopAt = time.Now().Add(l.duration)
	close(gate)
	wg.Wait()
	if l.cpu {
		res.clientCPU, res.serverCPU, res.serverCPUOK = sides.sample().perGrant(cpuBefore, res.granted)
		res.cpuOK = res.granted > 0
	}
	closeAll()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if l.after != nil {
		if err := l.after(ctx); err != nil {
			return nil, err
		}
	}
	sort.Slice(res.pairs, func(i, j int) bool { return res.pairs[i].acquired.Before(res.pairs[j].acquired) })
	// A lock that fails under this load is a finding, not a reason to
	// lose the whole report: its errors are counted and shown beside its
	// figures (and a window with no pair at all reports 0 pairs/s).
	if res.errors > 0 {
		b.opts.logf("%s, %d client(s): %d errors (last: %v)", l.spec.Name, l.clients, res.errors, oneLine(fmt.Sprint(res.lastErr)))
	}
	return res, nil
}

// handoffs walks the grants of one key in order. A grant to a different
// client than the previous holder is a hand-off, timed from the moment the
// previous holder began to release to the moment the new holder's acquire
// returned; a grant back to the same client is counted apart. A grant that
// returned before the previous holder began to release means two holders at
// once: counted as an overlap (a correct lock has none).
func handoffs(pairs []pair) (hand []time.Duration, same, overlaps int) {
	for i := 1; i < len(pairs); i++ {
		prev, cur := pairs[i-1], pairs[i]
		if cur.client == prev.client {
			same++
			continue
		}
		d := cur.acquired.Sub(prev.releaseStart)
		if d < 0 {
			overlaps++
			continue
		}
		hand = append(hand, d)
	}
	return hand, same, overlaps
}

// perClient counts grants per client.
func perClient(pairs []pair, clients int) []int {
	out := make([]int, clients)
	for _, p := range pairs {
		out[p.client]++
	}
	return out
}

// lockPIDs are the processes of the lock's servers: every server the
// run started for the lock's backend (replicas and sentinels included, as
// their work is the lock's too), not the protected resource's. None for an
// in-process lock or servers the lab did not start.
func (b *bench) lockPIDs(s impls.Spec) []int {
	if s.Backend.InProcess || s.Backend.Kind == "" || b.opts.External.Any() {
		return nil
	}
	serves := func(k topology.Kind) bool {
		return k == s.Backend.Kind || (s.Backend.Kind == topology.Redis && (k == topology.RedisCluster || k == topology.Sentinel))
	}
	var pids []int
	for n, pid := range b.pids {
		if n != b.topo.Resource && serves(n.Kind) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// allPIDs are every server's processes, left out of the clients' count.
func (b *bench) allPIDs() []int {
	pids := make([]int, 0, len(b.pids))
	for _, pid := range b.pids {
		pids = append(pids, pid)
	}
	return pids
}
