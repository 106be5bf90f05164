package benchmark

import (
	"context"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/impls/redislock"
)

// The physical limit of each backend: the cheapest request there is (Redis
// PING, ZooKeeper exists, PostgreSQL SELECT 1), sent back to back by one
// client and by several, with the client libraries and connection settings
// the locks use. No lock can do an acquire-release pair faster than its
// round trips allow at this rate.

// Backend kinds, as the report names them.
const (
	BackendRedis     = "redis"
	BackendZooKeeper = "zookeeper"
	BackendPostgres  = "postgres"
	BackendInProcess = "in-process"
)

// roundTripper is one client of the limit measurement.
type roundTripper struct {
	op    func(ctx context.Context) error
	close func()
}

// limitRequest names the request each backend's limit is measured with.
var limitRequest = map[string]string{
	BackendRedis:     "PING",
	BackendZooKeeper: "exists /",
	BackendPostgres:  "SELECT 1",
}

func (b *bench) newRoundTripper(ctx context.Context, backend string) (*roundTripper, error) {
	switch backend {
	case BackendRedis:
		rdb := redislock.NewClient(b.topo.RedisAddrs[0], b.opts.TTL)
		return &roundTripper{
			op:    func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
			close: func() { rdb.Close() },
		}, nil
	case BackendZooKeeper:
		conn, err := dialZK(ctx, b.topo.ZooKeeperAddr, b.opts.TTL)
		if err != nil {
			return nil, err
		}
		return &roundTripper{
			op: func(context.Context) error {
				_, _, err := conn.Exists("/")
				return err
			},
			close: conn.Close,
		}, nil
	case BackendPostgres:
		conn, err := pgx.Connect(ctx, b.topo.PostgresDSN)
		if err != nil {
			return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
		}
		return &roundTripper{
			op: func(ctx context.Context) error {
				var one int
				return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
			},
			close: func() { conn.Close(context.Background()) },
		}, nil
	}
	return nil, fmt.Errorf("no round-trip limit for backend %q", backend)
}

// dialZK opens a ZooKeeper session and waits until it is established, so
// that the session set-up is not part of any measurement.
func dialZK(ctx context.Context, addrs []string, timeout time.Duration) (*zk.Conn, error) {
	conn, events, err := zk.Connect(addrs, timeout, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper: %w", err)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
		case <-deadline.C:
			conn.Close()
			return nil, fmt.Errorf("ZooKeeper session not established within 10s")
		case <-ctx.Done():
			conn.Close()
			return nil, ctx.Err()
		}
	}
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
		return 0, fmt.Errorf("%s round trip (%s): %w", backend, limitRequest[backend], first)
	}
	return float64(total) / d.Seconds(), nil
}
