package impls_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/topology"
)

// Two clients of one lock on a real Redis the lab starts: the second
// cannot take the key while the first holds it, and can once it is
// released. Every lock of the lab is used through these few calls.
func ExampleLocker() {
	ctx := context.Background()
	servers, err := cluster.Start(ctx, topology.Of(topology.RedisNodes(1)), cluster.External{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer servers.Close()
	spec, _ := impls.Lookup("redis-setnx-px")
	client := func(id string) impls.Locker {
		l, err := spec.New(impls.Config{Servers: servers.Endpoints(), TTL: 2 * time.Second, ClientID: id})
		if err != nil {
			panic(err)
		}
		return l
	}
	a, b := client("a"), client("b")
	defer a.Close()
	defer b.Close()

	lease, err := a.Acquire(ctx, "coupon")
	if err != nil {
		fmt.Println(err)
		return
	}
	token, fenced := lease.Token()
	fmt.Println("a holds coupon, token", token, fenced)
	if _, err := b.TryAcquire(ctx, "coupon"); errors.Is(err, impls.ErrHeld) {
		fmt.Println("b: held by someone else")
	}
	if err := lease.Release(ctx); err != nil {
		fmt.Println(err)
		return
	}
	next, err := b.TryAcquire(ctx, "coupon")
	if err != nil {
		fmt.Println(err)
		return
	}
	token, _ = next.Token()
	fmt.Println("b holds coupon, token", token)
	if err := lease.Release(ctx); errors.Is(err, impls.ErrNotHeld) {
		fmt.Println("a's second release: not held")
	}
	// Output:
	// a holds coupon, token 1 true
	// b: held by someone else
	// b holds coupon, token 2
	// a's second release: not held
}
