package netproxy_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/netproxy"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

func TestCutHealRetarget(t *testing.T) {
	ctx := context.Background()
	a, err := cluster.StartRedis(ctx, cluster.RedisOptions{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	b, err := cluster.StartRedis(ctx, cluster.RedisOptions{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	net := netproxy.New()
	defer net.Close()
	link, err := net.Link(0, "a", a.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: link.Addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	if err := c.Set(ctx, "where", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}

	link.Cut()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("a cut link still answered")
	}
	if err := link.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		// The first request after a heal may meet the connection the cut closed.
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("healed link: %v", err)
		}
	}

	if err := link.Retarget("b", b.Addr); err != nil {
		t.Fatal(err)
	}
	var got string
	for i := 0; i < 3; i++ {
		if got, err = c.Get(ctx, "where").Result(); err != redis.Nil && err != nil {
			continue
		}
		break
	}
	if err != redis.Nil {
		t.Fatalf("after retargeting to b, GET where = %q, %v; want nil (b is empty)", got, err)
	}
}
