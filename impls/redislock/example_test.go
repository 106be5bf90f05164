package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redislock"
	"github.com/locklab/locklab/topology"
)

// The correct single-server Redis lock on a go-redis client: SET NX PX
// with a fencing token drawn in the same script. A lease that is not
// refreshed expires on the server, and another client takes the lock with
// a larger token; the first holder's release then finds the lock no longer
// its own, and says so rather than delete the new holder's. The Redis is
// one the lab starts; without redis-server installed the example prints
// why it could not start one, and fails.
func ExampleNewSetNXPX() {
	ctx := context.Background()
	servers, err := cluster.Start(ctx, topology.Of(topology.RedisNodes(1)), cluster.External{})
	if err != nil {
		fmt.Println("no Redis could start:", err)
		return
	}
	defer servers.Close()
	addr := servers.Endpoints().First(topology.Redis)
	const ttl = 300 * time.Millisecond
	a := redislock.NewSetNXPX(redis.NewClient(&redis.Options{Addr: addr}), ttl)
	b := redislock.NewSetNXPX(redis.NewClient(&redis.Options{Addr: addr}), ttl)
	defer a.Close()
	defer b.Close()

	lease, err := a.Acquire(ctx, "report")
	if err != nil {
		fmt.Println(err)
		return
	}
	token, _ := lease.Token()
	fmt.Println("a holds report, token", token)
	if _, err := b.TryAcquire(ctx, "report"); errors.Is(err, impls.ErrHeld) {
		fmt.Println("b: held")
	}

	time.Sleep(2 * ttl) // a neither refreshes nor releases: its lease expires
	next, err := b.TryAcquire(ctx, "report")
	if err != nil {
		fmt.Println(err)
		return
	}
	token, _ = next.Token()
	fmt.Println("b holds report, token", token)
	if err := lease.Release(ctx); errors.Is(err, impls.ErrNotHeld) {
		fmt.Println("a's release: not held, b's lock untouched")
	}
	if err := next.Release(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("b released")
	// Output:
	// a holds report, token 1
	// b: held
	// b holds report, token 2
	// a's release: not held, b's lock untouched
	// b released
}
