package benchmark

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/resource"
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
	// profile: profile this process's CPU in the window (profile.go).
	profile bool
	// pooled: the clients' lockers are the run's (lockers), not the
	// load's own.
	pooled bool
}

// run is what one measurement saw.
type run struct {
	pairs []pair // completed within the measured windows, by acquire time within each
	// windows are where each window's pairs start in pairs: a run of
	// interleaved slices has one per slice.
	windows  []int
	granted  int // every successful acquire, the drain's included
	errors   int // acquires or releases that failed (not counted as pairs)
	lastErr  error
	duration time.Duration
	// clientCPU and serverCPU are µs of CPU per grant, drain included
	// (load.cpu); serverCPU only where serverCPUOK.
	clientCPU, serverCPU float64
	cpuOK, serverCPUOK   bool
	// parts: this process's profiled CPU in the window by cpuPart, in ns,
	// and how many samples it rests on (load.profile).
	parts   map[string]float64
	samples int
	// processCPU is this process's CPU time in the profiled window, as
	// the kernel counts it (getrusage): the total the parts share.
	processCPU time.Duration
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
	locker impls.Locker
	// owned: the session built the locker and closes it; otherwise it is
	// the run's (pooled) and outlives the session.
	owned   bool
	section *workload.Client
	relAt   time.Time // set by the before-release hook of the section
}

// newClients builds a load's clients: on lockers when given (the run's
// pool), else each on a locker of its own.
func (b *bench) newClients(l load, lockers []impls.Locker) ([]*lockClient, error) {
	out := make([]*lockClient, 0, l.clients)
	closeAll := func() {
		for _, c := range out {
			c.close()
		}
	}
	rec := lin.NewRecorder(nil)
	for i := 0; i < l.clients; i++ {
		c := &lockClient{}
		if lockers != nil {
			c.locker = lockers[i]
		} else {
			lk, err := l.spec.New(b.config(i))
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("new %s client %d: %w", l.spec.Name, i, err)
			}
			c.locker, c.owned = lk, true
		}
		if l.section {
			key := l.keys(i)
			c.section = &workload.Client{
				ID: i, Key: key, Locker: c.locker, Rec: rec,
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
	if c.owned {
		c.locker.Close()
	}
	if c.section != nil {
		c.section.Counter.Close()
	}
}

// lockers returns n of the run's lockers of s, building (and warming up)
// the ones it lacks: the interleaved sessions and the sweep draw on one
// pool per lock, so that a lock's clients are built once per run, as a
// program keeps its lock clients, not once per measurement (a guest's
// client is a process of its own, a JVM for Curator).
func (b *bench) lockers(ctx context.Context, s impls.Spec, n int) ([]impls.Locker, error) {
	pool := b.pool[s.Name]
	for i := len(pool); i < n; i++ {
		lk, err := s.New(b.config(i))
		if err != nil {
			return nil, fmt.Errorf("new %s client %d: %w", s.Name, i, err)
		}
		pool = append(pool, lk)
		b.pool[s.Name] = pool
		warm(ctx, lk, fmt.Sprintf("bench-%s-warm-%d", b.runID, i))
	}
	return pool[:n], nil
}

// warm opens a locker's connections (and loads its scripts) with one try
// on a key of its own, so that connection set-up is not measured, nor
// counted as the lock's cost.
func warm(ctx context.Context, lk impls.Locker, key string) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if lease, err := lk.TryAcquire(wctx, key); err == nil {
		_ = lease.Release(wctx)
	}
}

func (b *bench) closePool() {
	for _, pool := range b.pool {
		for _, lk := range pool {
			lk.Close()
		}
	}
	b.pool = nil
}

// measure runs one load in one window of its duration, its hooks and CPU
// sampling around it.
func (b *bench) measure(ctx context.Context, l load) (*run, error) {
	s, err := b.open(ctx, l)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if l.before != nil {
		if err := l.before(ctx); err != nil {
			return nil, err
		}
	}
	// The processes to count are found before the window, so the scan of
	// every process is not charged to the clients; inside it only their
	// threads' run times are read.
	var sides *cpuSides
	if l.cpu {
		if sides, err = newCPUSides(b.lockPIDs(l.spec), b.allPIDs(), s.processes()); err != nil {
			return nil, err
		}
	}
	res, err := s.window(ctx, l.duration, sides)
	if err != nil {
		return nil, err
	}
	s.close()
	if l.after != nil {
		if err := l.after(ctx); err != nil {
			return nil, err
		}
	}
	b.logErrors(l, res)
	return res, nil
}

// logErrors says what failed in a load. A lock that fails under a load is
// a finding, not a reason to lose the whole report: its errors are counted
// and shown beside its figures (and a window with no pair at all reports
// 0 pairs/s).
func (b *bench) logErrors(l load, res *run) {
	if res.errors > 0 {
		b.opts.logf("%s, %d client(s): %d errors (last: %v)", l.spec.Name, l.clients, res.errors, oneLine(fmt.Sprint(res.lastErr)))
	}
}

// session is one load's clients, built and warmed up once and then measured
// in one window or several (interleave).
type session struct {
	b       *bench
	l       load
	clients []*lockClient
	closed  bool
}

// open builds the load's clients (on the run's pool of lockers when the
// load is pooled) and warms them up, one client at a time, so that
// connection set-up is not measured, nor counted as the lock's cost, nor
// piled up by 32 clients dialling at once.
func (b *bench) open(ctx context.Context, l load) (*session, error) {
	var lockers []impls.Locker
	if l.pooled {
		var err error
		if lockers, err = b.lockers(ctx, l.spec, l.clients); err != nil {
			return nil, err
		}
	}
	clients, err := b.newClients(l, lockers)
	if err != nil {
		return nil, err
	}
	for i, c := range clients {
		if c.owned {
			warm(ctx, c.locker, l.keys(i)+"-warm")
		}
		if c.section != nil {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, _ = c.section.Counter.Value(wctx)
			cancel()
		}
	}
	return &session{b: b, l: l, clients: clients}, nil
}

// processes are the processes the session's lockers run in beside this
// one (a guest's), whose CPU time is the clients' too.
func (s *session) processes() []int {
	var out []int
	for _, c := range s.clients {
		if p, ok := c.locker.(interface{ PID() int }); ok {
			out = append(out, p.PID())
		}
	}
	return out
}

func (s *session) close() {
	if !s.closed {
		for _, c := range s.clients {
			c.close()
		}
		s.closed = true
	}
}

// window runs the clients for d: every client loops acquire, (critical
// section), release until the window closes; a client that holds the lock
// when it closes still releases it, and waiters still waiting are let
// through (the drain), but only pairs that completed inside the window
// count. Cancelling the waiters instead would be quicker (a polling lock
// lets its waiters through one retry interval apart, node-redlock's is
// 200 ms), but a cancel that lands on a request in flight leaves its
// outcome unknown, and a grant nobody holds blocks the key for a lease:
// tried, it did, and slowed the next slice more than the drain. With
// sides, both sides' CPU time is sampled around it.
func (s *session) window(ctx context.Context, d time.Duration, sides *cpuSides) (*run, error) {
	l := s.l
	// The drain bound: a waiter queued behind every other client, each
	// holding for a round or two, or a lease left by a failed release to
	// expire.
	drain := 2*s.b.opts.TTL + 10*time.Second
	var (
		mu     sync.Mutex
		res    = &run{duration: d, windows: []int{0}}
		wg     sync.WaitGroup
		gate   = make(chan struct{})
		stopAt time.Time
	)
	for i, c := range s.clients {
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
	var cpuBefore cpuUse
	if sides != nil {
		cpuBefore = sides.sample()
	}
	var prof *cpuProfile
	if l.profile {
		var err error
		if prof, err = startProfile(); err != nil {
			close(gate)
			wg.Wait()
			return nil, err
		}
	}
	stopAt = time.Now().Add(d)
	close(gate)
	wg.Wait()
	if prof != nil {
		res.processCPU = processCPU() - prof.cpuAtStart
		res.parts = map[string]float64{}
		var err error
		if res.samples, err = prof.stop(res.parts); err != nil {
			return nil, err
		}
	}
	if sides != nil {
		res.clientCPU, res.serverCPU, res.serverCPUOK = sides.sample().perGrant(cpuBefore, res.granted)
		res.cpuOK = res.granted > 0
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Slice(res.pairs, func(i, j int) bool { return res.pairs[i].acquired.Before(res.pairs[j].acquired) })
	return res, nil
}

// add appends window w to r: its pairs as a window of their own (a
// hand-off is never counted across two windows), its counts and its time.
func (r *run) add(w *run) {
	r.windows = append(r.windows, len(r.pairs))
	r.pairs = append(r.pairs, w.pairs...)
	r.granted += w.granted
	r.errors += w.errors
	if w.lastErr != nil {
		r.lastErr = w.lastErr
	}
	r.duration += w.duration
	if w.samples > 0 {
		r.parts = addParts(r.parts, w.parts)
		r.samples += w.samples
		r.processCPU += w.processCPU
	}
}

// handoffs are the hand-offs of every window of r (see handoffs).
func (r *run) handoffs() (hand []time.Duration, same, overlaps int) {
	for i, start := range r.windows {
		end := len(r.pairs)
		if i+1 < len(r.windows) {
			end = r.windows[i+1]
		}
		h, s, o := handoffs(r.pairs[start:end])
		hand = append(hand, h...)
		same += s
		overlaps += o
	}
	return hand, same, overlaps
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
	var pids []int
	for n, pid := range b.pids {
		// A server serves the lock when its kind gives clients the lock's
		// kind of endpoint: its own, or Redis's for a sentinel or a
		// cluster member (cluster.Serves).
		if n != b.topo.Resource && cluster.Serves(n.Kind) == s.Backend.Kind {
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
