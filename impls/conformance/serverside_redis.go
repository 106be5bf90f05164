package conformance

// The suite's reads of a Redis lock server: which node holds a key, every
// key a lock left and its type and expiry, and a lock's footprint measured
// by holding and releasing a key.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// clusterMasters lists the addresses of a Redis Cluster's masters, as
// the cluster's slot map names them, in a stable order. The suite reads and
// writes a lock's keys on the masters only: a key lives on the master of
// its slot (a lock's keys share one slot by their hash tag), a replica
// answers MOVED for it (no READONLY), and a SCAN of every member would
// list each key twice.
func clusterMasters(t *testing.T, c *redis.ClusterClient) []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	err := c.ForEachMaster(context.Background(), func(_ context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, m.Options().Addr)
		return nil
	})
	if err != nil {
		t.Fatalf("the masters of the Redis Cluster: %v", err)
	}
	sort.Strings(out)
	return out
}

// redisAt is the client for key name, written or read beside a key found
// on lock node node: that node's client, or on a Redis Cluster the master
// of name's slot (go-redis's slot map), which for a name of another lock
// key may be another master.
func (s *server) redisAt(t *testing.T, node int, name string) *redis.Client {
	t.Helper()
	if s.cluster == nil {
		return s.redis[node]
	}
	m, err := s.cluster.MasterForKey(context.Background(), name)
	if err != nil {
		t.Fatalf("the master of %q's slot: %v", name, err)
	}
	return m
}

// redisHolders are the lock nodes that must each hold key name when a
// lock keeps it: every node (a lock over several independent nodes writes
// to each), or on a Redis Cluster the one master of name's slot.
func (s *server) redisHolders(t *testing.T, name string) []int {
	t.Helper()
	if s.cluster == nil {
		out := make([]int, len(s.redis))
		for i := range out {
			out[i] = i
		}
		return out
	}
	addr := s.redisAt(t, 0, name).Options().Addr
	for i, rdb := range s.redis {
		if rdb.Options().Addr == addr {
			return []int{i}
		}
	}
	t.Fatalf("the master of %q's slot, %s, is none of the masters the suite found (%d): the slot map changed under the suite", name, addr, len(s.redis))
	return nil
}

// redisKey is one key a lock left on one Redis node, as the server sees it.
type redisKey struct {
	node int
	name string
	typ  string        // "string", "hash", ...
	ttl  time.Duration // -1: no expiry
}

func (k redisKey) String() string {
	ttl := "no expiry"
	if k.ttl >= 0 {
		ttl = "ttl " + k.ttl.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("node %d: %q %s, %s", k.node, k.name, k.typ, ttl)
}

// redisKeys lists every key on every lock node whose name contains key.
// Fresh keys are plain letters, digits and dashes, so they need no glob
// escaping.
func (s *server) redisKeys(t *testing.T, key string) []redisKey {
	t.Helper()
	ctx := context.Background()
	var out []redisKey
	for i, rdb := range s.redis {
		names, err := scanAll(ctx, rdb, "*"+key+"*")
		if err != nil {
			t.Fatalf("scan node %d: %v", i, err)
		}
		for _, name := range names {
			typ, err := rdb.Type(ctx, name).Result()
			if err != nil {
				t.Fatalf("TYPE %q: %v", name, err)
			}
			ttl, err := rdb.PTTL(ctx, name).Result()
			if err != nil {
				t.Fatalf("PTTL %q: %v", name, err)
			}
			if typ == "none" {
				continue // expired between the scan and the TYPE
			}
			out = append(out, redisKey{node: i, name: name, typ: typ, ttl: ttl})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].node != out[j].node {
			return out[i].node < out[j].node
		}
		return out[i].name < out[j].name
	})
	return out
}

func scanAll(ctx context.Context, rdb *redis.Client, match string) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, match, 1000).Result()
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// redisFootprint is what a lock keeps on Redis for one key: the keys that
// exist only while it is held (the lock itself) and those that outlive a
// release with no expiry (fencing counters). A key a release leaves with an
// expiry (redis-reentrant's wake token for the next waiter) is neither.
type redisFootprint struct {
	key     string
	lock    []redisKey
	counter []redisKey
}

// rename maps a footprint key's name to the same key of another lock key.
func (f redisFootprint) rename(k redisKey, key string) string {
	return strings.ReplaceAll(k.name, f.key, key)
}

// footprint acquires key once with l and reads back what that left on the
// servers while held and after release.
func (s *server) redisFootprint(t *testing.T, l impls.Locker, key string) redisFootprint {
	t.Helper()
	lease := mustAcquire(t, l, key)
	held := s.redisKeys(t, key)
	mustRelease(t, lease)
	after := s.redisKeys(t, key)
	f := redisFootprint{key: key}
	stays := map[string]bool{}
	for _, k := range after {
		stays[fmt.Sprint(k.node, k.name)] = true
		if k.ttl < 0 {
			f.counter = append(f.counter, k)
		}
	}
	for _, k := range held {
		if !stays[fmt.Sprint(k.node, k.name)] {
			f.lock = append(f.lock, k)
		}
	}
	if len(f.lock) == 0 {
		t.Fatalf("a held lock left no key on Redis that its release removed; keys while held: %v", held)
	}
	return f
}
