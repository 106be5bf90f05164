package cluster

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelReplicaFlags is what sentinel n says of the replica at addr
// (ip:port) of the group's master: its flags ("slave", "slave,s_down",
// "slave,disconnected"...), as SENTINEL REPLICAS lists them. A fault that
// wants a replica promoted must first know that every sentinel counts it
// among the good ones: Sentinel's fail-over skips a replica it sees down
// or disconnected, and then promotes nothing.
func SentinelReplicaFlags(ctx context.Context, n *Node, addr string) (string, error) {
	c := redis.NewSentinelClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1, Dialer: n.dialer(),
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	rs, err := c.Replicas(ctx, SentinelMaster).Result()
	if err != nil {
		return "", fmt.Errorf("SENTINEL REPLICAS on %s: %w", n.Name, err)
	}
	for _, r := range rs {
		if net.JoinHostPort(r["ip"], r["port"]) == addr {
			return r["flags"], nil
		}
	}
	return "", fmt.Errorf("%s lists no replica at %s", n.Name, addr)
}
