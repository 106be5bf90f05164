// Package resource is the protected resource that every lock in the lab is
// judged by: a counter on a Redis server of its own (never a lock node).
// A critical section reads it and writes what it read plus one.
//
// With fencing on, the resource remembers the highest fencing token it has
// seen and refuses any read or write carrying an older one. Checking reads
// too matters: if only writes were checked, a stale holder could read, a new
// holder read the same value, and the stale write land before the new
// holder's first write raised the bar: a lost update that fencing was meant
// to prevent.
package resource

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrRefused is returned when the resource refuses a stale fencing token.
var ErrRefused = errors.New("resource refused a stale fencing token")

// Counter is one client's handle on the protected counter.
type Counter struct {
	rdb   *redis.Client
	key   string
	fence string
}

// New opens a handle on the counter called name on the Redis at addr.
func New(addr, name string) *Counter { return NewVia(addr, name, nil) }

// NewVia is New connecting through dial (nil: the default dialer): the lab
// reaches a resource on one of its hosts only from the hosts' switch.
func NewVia(addr, name string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Counter {
	return &Counter{
		rdb: redis.NewClient(&redis.Options{
			Addr: addr, MaxRetries: -1, DialerRetries: 1, PoolSize: 2, Dialer: dial,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		}),
		key:   "{" + name + "}:value",
		fence: "{" + name + "}:max-token",
	}
}

// fencedRead raises the highest token seen and returns the value, or
// refuses the read when ARGV[1] is older than that.
var fencedRead = redis.NewScript(`
local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local tok = tonumber(ARGV[1])
if tok < max then return {0, 0} end
redis.call('SET', KEYS[2], ARGV[1])
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}
`)

var fencedWrite = redis.NewScript(`
local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local tok = tonumber(ARGV[1])
if tok < max then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
return 1
`)

// Reset sets the counter to 0 and forgets every token.
func (c *Counter) Reset(ctx context.Context) error {
	if err := c.rdb.Del(ctx, c.key, c.fence).Err(); err != nil {
		return fmt.Errorf("reset counter: %w", err)
	}
	return nil
}

// Read returns the counter. With fenced, token must be at least the highest seen.
func (c *Counter) Read(ctx context.Context, token uint64, fenced bool) (int64, error) {
	if !fenced {
		v, err := c.rdb.Get(ctx, c.key).Int64()
		if errors.Is(err, redis.Nil) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read counter: %w", err)
		}
		return v, nil
	}
	res, err := fencedRead.Run(ctx, c.rdb, []string{c.key, c.fence}, strconv.FormatUint(token, 10)).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("fenced read of counter: %w", err)
	}
	if res[0] == 0 {
		return 0, ErrRefused
	}
	return res[1], nil
}

// Write sets the counter to v. With fenced, token must be at least the highest seen.
func (c *Counter) Write(ctx context.Context, token uint64, fenced bool, v int64) error {
	if !fenced {
		if err := c.rdb.Set(ctx, c.key, v, 0).Err(); err != nil {
			return fmt.Errorf("write counter: %w", err)
		}
		return nil
	}
	ok, err := fencedWrite.Run(ctx, c.rdb, []string{c.key, c.fence}, strconv.FormatUint(token, 10), v).Int64()
	if err != nil {
		return fmt.Errorf("fenced write of counter: %w", err)
	}
	if ok == 0 {
		return ErrRefused
	}
	return nil
}

// Value reads the counter without any fencing (for reports).
func (c *Counter) Value(ctx context.Context) (int64, error) { return c.Read(ctx, 0, false) }

// Close closes the connections.
func (c *Counter) Close() error { return c.rdb.Close() }
