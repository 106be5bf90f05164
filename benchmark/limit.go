package benchmark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

// The physical limit of each backend: the cheapest request a grant can
// cost there (Redis PING, PostgreSQL SELECT 1; on ZooKeeper and etcd, whose
// every grant is a write through the leader, one write; each kind says
// which, cluster.ServerKind.Cheapest), sent back to back by one
// client and by several, with the client libraries and connection settings
// the locks use. No lock can do an acquire-release pair faster than its
// round trips allow at this rate.

// inProcess is the report's backend for a lock without servers (an
// in-process mutex): no server kind, so no limit and no count. Every
// other backend is its server kind's name (cluster.ServerKind.Kind).
const inProcess = "in-process"

// roundTripper is one client of the limit measurement.
type roundTripper struct {
	op    func(ctx context.Context) error
	close func()
}

// limitRequest names the request a backend's limit is measured with: its
// server kind's cheapest.
func limitRequest(backend string) string {
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return "?"
	}
	return k.Cheapest()
}

// newRoundTripper opens one client sending the backend kind's cheapest
// request (cluster.ServerKind.OpenCheapest).
func (b *bench) newRoundTripper(ctx context.Context, backend string) (*roundTripper, error) {
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return nil, fmt.Errorf("no round-trip limit for backend %q: %w", backend, err)
	}
	op, closeFn, err := k.OpenCheapest(ctx, b.topo.Endpoints()[k.Kind()])
	if err != nil {
		return nil, err
	}
	return &roundTripper{op: op, close: closeFn}, nil
}

// roundTrips measures requests per second of n clients over d.
func (b *bench) roundTrips(ctx context.Context, backend string, n int, d time.Duration) (float64, error) {
	rts := make([]*roundTripper, 0, n)
	defer func() {
		for _, rt := range rts {
			rt.close()
		}
	}()
	for i := 0; i < n; i++ {
		rt, err := b.newRoundTripper(ctx, backend)
		if err != nil {
			return 0, err
		}
		rts = append(rts, rt)
	}
	var (
		mu    sync.Mutex
		total int
		first error
		wg    sync.WaitGroup
		gate  = make(chan struct{})
		stop  time.Time
	)
	for _, rt := range rts {
		wg.Add(1)
		go func(rt *roundTripper) {
			defer wg.Done()
			<-gate
			count := 0
			var err error
			for time.Now().Before(stop) {
				if err = rt.op(ctx); err != nil {
					break
				}
				count++
			}
			mu.Lock()
			total += count
			if err != nil && first == nil {
				first = err
			}
			mu.Unlock()
		}(rt)
	}
	stop = time.Now().Add(d)
	close(gate)
	wg.Wait()
	if first != nil {
		return 0, fmt.Errorf("%s round trip (%s): %w", backend, limitRequest(backend), first)
	}
	return float64(total) / d.Seconds(), nil
}

// Two more limits, for the locks that do more than one round trip to
// one server at a time.
//
// The wake-up hop: the cheapest hand-off there is between two clients
// through Redis, one client's RPUSH reaching another's blocked BLPOP. A
// lock that hands the lock to a sleeping waiter (redis-fair's release
// pushes onto the list its waiter sleeps on) cannot hand over faster.
//
// The fan-out: one client sending PING to every lock node in parallel, a
// goroutine per node as the multi-node locks do, waiting for every answer
// or for a majority. On a machine with fewer cores than nodes, a fan-out
// costs more than one node's round trip, and no multi-node lock can beat it.

// hopWait bounds each BLPOP of the wake-up measurement: a token not back
// within it was lost, an error rather than a slow figure.
const hopWait = 5 * time.Second

// hopWarmup is how many ping-pong cycles run before the clock starts, so
// that no dial or first-call cost is timed.
const hopWarmup = 20

// newWaitClient is a client for blocking reads, built as redis-fair builds
// its wait client: the lock clients' settings (no retries, one dial per
// request), with a read timeout that outlasts a BLPOP. A pipeline's read
// deadline is the client's ReadTimeout, whatever the BLPOP's own timeout.
func (b *bench) newWaitClient(ep topology.Endpoint) (redis.UniversalClient, error) {
	// Through the lock clients' own way in: one server, the master a
	// Sentinel group names, or a cluster's slot master.
	return redisclient.Open(ep, b.opts.TTL, func(o *redis.Options) {
		o.ReadTimeout, o.PoolSize = hopWait+time.Second, 2
	})
}

// wakeUpHop measures one hop, in milliseconds: two clients play ping-pong
// with a token for d, each pushing it onto the other's list and then
// blocking on its own, and a hop is half a cycle.
//
// Each side sends its RPUSH and its next BLPOP in one pipeline on one
// connection. Redis runs both commands of a pipeline before it writes any
// reply, and it writes the peer's BLPOP reply (the wake-up the RPUSH
// caused) only after that, so the peer can push back only once our BLPOP
// is already waiting on the server. A cycle is then exactly two hops,
// each from one client's send to the other's receipt of its BLPOP reply,
// which is what a hand-off costs between a release's start and the
// waiter's return. The pushing side does not wait for its RPUSH's reply
// apart: it comes back with the BLPOP's, already in the socket buffer.
//
// Two other designs were tried and set aside for what they time, not for
// their figure. With the push on the lock's own client and the BLPOP after
// it in one goroutine, the BLPOP leaves only once the push's reply is
// back, about when the peer is woken, so whether the BLPOP waits for the
// token or the token for the BLPOP is a race, and a cycle times a push's
// round trip and a BLPOP's rather than a wake-up. Two goroutines per side
// (one pushing, one always blocked) add a goroutine hand-off to every hop.
// On the lab's 2-core machine the three came out within a few percent of
// one another (medians of 15 interleaved rounds: 49, 47 and 47 µs, PING
// 19 µs), so the choice changes what is timed, not the number.
//
// It is Redis's (cluster.WakeUpHopper, request names it): the only kind
// with one.
func (b *bench) wakeUpHop(ctx context.Context, ep topology.Endpoint, request string, d time.Duration) (float64, error) {
	addr := strings.Join(ep.Addrs, ",")
	ping, err := b.newWaitClient(ep)
	if err != nil {
		return 0, fmt.Errorf("wake-up hop: %w", err)
	}
	pong, err := b.newWaitClient(ep)
	if err != nil {
		ping.Close()
		return 0, fmt.Errorf("wake-up hop: %w", err)
	}
	closed := false
	closeAll := func() {
		if !closed {
			closed = true
			ping.Close()
			pong.Close()
		}
	}
	defer closeAll()
	for _, c := range []redis.UniversalClient{ping, pong} {
		if err := c.Ping(ctx).Err(); err != nil {
			return 0, fmt.Errorf("wake-up hop: connect to Redis %s: %w", addr, err)
		}
	}
	base := b.key()
	// One hash tag: on a Redis Cluster both lists sit in one slot, so each
	// side's RPUSH and BLPOP go to one server in one pipeline.
	listPing, listPong := "{"+base+"}-hop-ping", "{"+base+"}-hop-pong"
	const token, stop = "t", "stop"
	// popped reads a BLPOP reply: the token, or an error saying which
	// list stayed empty.
	popped := func(pop *redis.StringSliceCmd, from string) (string, error) {
		v, err := pop.Result()
		switch {
		case errors.Is(err, redis.Nil):
			return "", fmt.Errorf("no token on %s within %v", from, hopWait)
		case err != nil:
			return "", err
		}
		return v[1], nil
	}
	// pass pushes the token onto to and waits on from, in one pipeline,
	// and returns what it popped.
	pass := func(c redis.UniversalClient, to, from string) (string, error) {
		pipe := c.Pipeline()
		push := pipe.RPush(ctx, to, token)
		pop := pipe.BLPop(ctx, hopWait, from)
		_, _ = pipe.Exec(ctx) // each command's error is read below
		if err := push.Err(); err != nil {
			return "", fmt.Errorf("RPUSH %s: %w", to, err)
		}
		return popped(pop, from)
	}
	// pong waits first, then echoes every token until it pops stop.
	pongErr := make(chan error, 1)
	go func() {
		got, err := popped(pong.BLPop(ctx, hopWait, listPong), listPong)
		for err == nil && got != stop {
			got, err = pass(pong, listPing, listPong)
		}
		pongErr <- err
	}()
	var (
		cycles  int
		started time.Time
	)
	for i := 0; ; i++ {
		if i == hopWarmup {
			started = time.Now()
		}
		if i > hopWarmup {
			cycles++
			if time.Since(started) >= d {
				break
			}
		}
		if err = ctx.Err(); err != nil {
			break
		}
		if _, err = pass(ping, listPong, listPing); err != nil {
			break
		}
	}
	elapsed := time.Since(started)
	if err != nil {
		// Closing the clients ends pong's BLPOP at once.
		closeAll()
		<-pongErr
		return 0, fmt.Errorf("wake-up hop (%s): %w", request, err)
	}
	if err := ping.RPush(ctx, listPong, stop).Err(); err != nil {
		closeAll()
		<-pongErr
		return 0, fmt.Errorf("wake-up hop: stop the echo: %w", err)
	}
	if err := <-pongErr; err != nil {
		return 0, fmt.Errorf("wake-up hop (%s), echoing side: %w", request, err)
	}
	return ms(elapsed) / float64(2*cycles), nil
}

// fanOut measures fan-outs per second over d: one client sends PING to
// every Redis lock node in parallel, a goroutine per node as the
// multi-node locks do, and goes on once need of them have answered. The
// others still finish in the background, as they would behind a lock
// that returns at a majority: they hold their connections and share the
// cores with the next fan-out.
//
// The lock nodes are independent Redis servers (cluster.FanOuter).
func (b *bench) fanOut(ctx context.Context, addrs []string, need int, d time.Duration) (float64, error) {
	nodes := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		nodes[i] = redisclient.New(a, b.opts.TTL)
	}
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		for _, n := range nodes {
			n.Close()
		}
	}()
	// Fill every pool before the clock starts: requests left in flight
	// hold connections, and a dial inside the window would be timed as a
	// round trip.
	warm := make(chan error, len(addrs)*nodes[0].Options().PoolSize)
	for _, n := range nodes {
		for range n.Options().PoolSize {
			go func() {
				// The node's address in the error: a dead node behind a
				// published container port answers EOF, which names none.
				if err := n.Ping(ctx).Err(); err != nil {
					warm <- fmt.Errorf("%s: %w", n.Options().Addr, err)
					return
				}
				warm <- nil
			}()
		}
	}
	for range cap(warm) {
		if err := <-warm; err != nil {
			return 0, fmt.Errorf("fan-out: connect to the Redis lock nodes: %w", err)
		}
	}
	var (
		mu    sync.Mutex
		first error
	)
	count := 0
	for stop := time.Now().Add(d); time.Now().Before(stop); {
		answered := make(chan struct{}, len(nodes))
		for i, n := range nodes {
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				if err := n.Ping(ctx).Err(); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("node %s: %w", addrs[i], err)
					}
					mu.Unlock()
				}
				answered <- struct{}{}
			}()
		}
		for range need {
			<-answered
		}
		mu.Lock()
		err := first
		mu.Unlock()
		if err != nil {
			return 0, fmt.Errorf("fan-out PING to %d nodes, waiting for %d: %w", len(nodes), need, err)
		}
		count++
	}
	inflight.Wait()
	if first != nil {
		return 0, fmt.Errorf("fan-out PING to %d nodes, waiting for %d: %w", len(nodes), need, first)
	}
	return float64(count) / d.Seconds(), nil
}
