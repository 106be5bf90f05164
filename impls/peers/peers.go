package peers

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

// The versions the adapters were written against; go.mod pins the same ones
// and a test checks that the two agree, so a Summary never names a version
// that is not the one measured.
const (
	bsmRedislockModule = "github.com/bsm/redislock"
	bsmRedislockVer    = "v0.9.4"
	redsyncModule      = "github.com/go-redsync/redsync/v4"
	redsyncVer         = "v4.18.1"
	zkModule           = "github.com/go-zookeeper/zk"
	zkVer              = "v1.0.4"
)

// Modules maps each peer library's module path to the version its adapter
// names, for the test that compares them with the build.
var Modules = map[string]string{
	bsmRedislockModule: bsmRedislockVer,
	redsyncModule:      redsyncVer,
	zkModule:           zkVer,
}

// redisClients builds one client per lock node with the same tuning as the
// lab's own Redis locks (no hidden retries, timeouts under the TTL), so that
// what differs between a peer and ours is the library, not the client.
func redisClients(cfg impls.Config, name string, nodes int) ([]redis.UniversalClient, error) {
	if nodes == 1 {
		// One server: through the endpoint, so a Sentinel group's master
		// is found the way the lab's own locks find it.
		rdb, err := redisclient.Open(cfg.Servers[topology.Redis], cfg.TTL, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return []redis.UniversalClient{rdb}, nil
	}
	if len(cfg.Addrs(topology.Redis)) < nodes {
		return nil, fmt.Errorf("%s: needs %d Redis nodes, %d configured", name, nodes, len(cfg.Addrs(topology.Redis)))
	}
	out := make([]redis.UniversalClient, nodes)
	for i, addr := range cfg.Addrs(topology.Redis)[:nodes] {
		out[i] = redisclient.New(addr, cfg.TTL)
	}
	return out, nil
}

func closeAll(clients []redis.UniversalClient) error {
	var first error
	for _, c := range clients {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// never is the Lost channel of leases whose library cannot learn of a loss.
var never = make(chan struct{})

// scaled stretches a library default meant for defaultTTL to the lab's TTL,
// keeping the ratio the library's authors chose, and never below floor.
func scaled(d, defaultTTL, ttl, floor time.Duration) time.Duration {
	s := time.Duration(float64(d) * float64(ttl) / float64(defaultTTL))
	if s < floor {
		s = floor
	}
	return s
}
