package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/topology"
)

// etcdClient is the suite's own client of a lock's etcd members, or nil
// when the lock has none.
func etcdClient(t *testing.T, topo *cluster.Topology) *clientv3.Client {
	t.Helper()
	addrs := topo.Endpoints().Addrs(topology.Etcd)
	if len(addrs) == 0 {
		return nil
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: addrs, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("connect to etcd %v: %v", addrs, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// etcdKeys lists every key on the cluster whose name contains key (a lock
// escapes nothing in the suite's fresh keys, which are letters, digits and
// dashes).
func (s *server) etcdKeys(t *testing.T, key string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.etcd.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatalf("list etcd keys: %v", err)
	}
	var out []string
	for _, kv := range r.Kvs {
		if strings.Contains(string(kv.Key), key) {
			out = append(out, string(kv.Key))
		}
	}
	return out
}

// stealEtcd deletes every key of the lock on key behind its holder's back,
// as an operator's `etcdctl del --prefix` would.
func (s *server) stealEtcd(t *testing.T, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, k := range s.etcdKeys(t, key) {
		if _, err := s.etcd.Delete(ctx, k); err != nil {
			t.Fatalf("delete %q: %v", k, err)
		}
	}
}
