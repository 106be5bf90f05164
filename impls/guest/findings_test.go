package guest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/topology"
)

// redis-py 4.3.4's Lock.release clears its token before it sends the
// release script (redis-py PR #4258 changes this): when that send fails,
// the holder cannot retry, as its library has forgotten the token, and the
// lock stays held until its TTL runs out although the holder asked twice
// to release it. The server is made to hold writes (CLIENT PAUSE WRITE)
// past the client's socket timeout, so the first release surely never ran.
func TestRedisPyReleaseAfterFailure(t *testing.T) {
	spec, err := impls.Lookup("guest:redis-py")
	if err != nil {
		t.Fatal(err)
	}
	topo := conformance.Topology(t, spec)
	ttl := 4 * time.Second // redis-py's socket timeout is half of it in the adapter
	l, err := spec.New(impls.Config{Servers: topo.Endpoints(), TTL: ttl, ClientID: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	admin := redis.NewClient(&redis.Options{Addr: topo.Endpoints().First(topology.Redis)})
	defer admin.Close()
	ctx := context.Background()
	key := fmt.Sprintf("release-after-failure-%d", time.Now().UnixNano())
	lease, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "PAUSE", ttl.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	first := lease.Release(ctx)
	if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(first, impls.ErrUnknown) {
		t.Fatalf("release against a server holding writes: %v, want ErrUnknown (redis-py's socket timed out)", first)
	}
	second := lease.Release(ctx)
	held, err := admin.Exists(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first release: %v; the retry: %v; the key after both: exists=%d", first, second, held)
	if !errors.Is(second, impls.ErrNotHeld) || held != 1 {
		t.Fatalf("redis-py's retried release after a failed one: %v, key exists=%d; "+
			"want ErrNotHeld (\"Cannot release an unlocked lock\") with the key still held: "+
			"has the release-clears-token behaviour changed?", second, held)
	}
}
