package clockjump_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

// A jump of the server's clock past a key's TTL expires the key at once,
// while the server keeps answering: the fault the Redlock debate is about.
func TestJumpExpiresKeys(t *testing.T) {
	ctx := context.Background()
	n, err := cluster.StartRedis(ctx, cluster.RedisOptions{ClockShift: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	c := redis.NewClient(&redis.Options{Addr: n.Addr})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	before, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.JumpClock(time.Minute); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Exists(ctx, "k").Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("key with a 10s TTL survived a one-minute clock jump")
		}
		time.Sleep(10 * time.Millisecond)
	}
	after, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if jump := after.Sub(before); jump < 50*time.Second {
		t.Fatalf("server TIME moved by %v, want about a minute", jump)
	}
}
