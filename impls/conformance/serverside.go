package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/topology"
)

// server is the suite's own view of a lock's backend: plain clients, apart
// from the lock's, that read back what the lock wrote and plant the state a
// lock never creates itself but production has (a key written by hand, a
// node left by another library, a row from an older deployment).
//
// Its reads are per server kind (serverside_redis.go, _zookeeper.go,
// _postgres.go, adversarial_mysql.go, adversarial_etcd.go), not per lock:
// what a given lock keeps there is the lock's own declaration
// (impls.Spec's Footprint), so the suite imports no lock package and a
// lock package imports the suite only from its tests.
type server struct {
	redis []*redis.Client // one per lock node (on a Redis Cluster, per master)
	// cluster routes a key to its slot's master on a Redis Cluster (nil
	// elsewhere): a key of another lock key has another hash tag, so it
	// may live on another master than the key it was renamed from.
	cluster *redis.ClusterClient
	zk      *zk.Conn
	etcd    *clientv3.Client
	pgDSN   string
	mysql   *mysqlServer // nil without a MySQL lock server
}

func newServer(t *testing.T, topo *cluster.Topology) *server {
	t.Helper()
	s := &server{pgDSN: topo.Endpoints().First(topology.Postgres), etcd: etcdClient(t, topo), mysql: newMySQLServer(topo)}
	addrs := topo.Endpoints().Addrs(topology.Redis)
	switch ep := topo.Endpoints()[topology.Redis]; ep.Via {
	case "sentinel":
		// The suite reads and writes the lock's keys where the lock does:
		// on the master the sentinels name, not on a sentinel.
		addr, err := cluster.RedisAddr(context.Background(), ep)
		if err != nil {
			t.Fatal(err)
		}
		addrs = []string{addr}
	case "cluster":
		s.cluster = redis.NewClusterClient(&redis.ClusterOptions{Addrs: ep.Addrs, MaxRetries: -1})
		t.Cleanup(func() { s.cluster.Close() })
		addrs = clusterMasters(t, s.cluster)
	}
	for _, addr := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		s.redis = append(s.redis, rdb)
	}
	if len(topo.Endpoints().Addrs(topology.ZooKeeper)) > 0 {
		conn, events, err := zk.Connect(topo.Endpoints().Addrs(topology.ZooKeeper), 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatalf("connect to ZooKeeper %v: %v", topo.Endpoints().Addrs(topology.ZooKeeper), err)
		}
		t.Cleanup(conn.Close)
		waitSession(t, events)
		s.zk = conn
	}
	return s
}

// steal takes the lock on key away from its holder behind the holder's back,
// the way an operator or another buggy client would: the lock's keys are
// deleted, its znodes removed, its rows deleted, its advisory session ended.
func (s *server) steal(t *testing.T, key string, f *redisFootprint, zkDir string) {
	t.Helper()
	ctx := context.Background()
	if f != nil {
		for _, k := range f.lock {
			if err := s.redisAt(t, k.node, f.rename(k, key)).Del(ctx, f.rename(k, key)).Err(); err != nil {
				t.Fatalf("DEL %q: %v", f.rename(k, key), err)
			}
		}
	}
	if zkDir != "" {
		children, _, err := s.zk.Children(zkDir)
		if err != nil {
			t.Fatalf("children of %s: %v", zkDir, err)
		}
		for _, c := range children {
			if err := s.zk.Delete(zkDir+"/"+c, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("delete %s/%s: %v", zkDir, c, err)
			}
		}
	}
	if s.etcd != nil {
		s.stealEtcd(t, key)
	}
	if s.pgDSN != "" {
		// A row lock is its transaction's: ending the session that holds
		// it is the only way to take it from outside (a DELETE would wait
		// for it). The row itself is the lock's place, not the lock.
		s.pgEndRowHolder(t, key)
		for _, tb := range s.pgTables(t, key) {
			if tb != "locklab_row_lock" {
				s.pg(t, "DELETE FROM "+pgx.Identifier{tb}.Sanitize()+" WHERE key = $1", key)
			}
		}
		// An advisory lock is a session's: ending that session is the only
		// way to take it from outside; the timeout makes the call wait until the
		// session has ended and its locks are gone.
		s.pg(t, `SELECT pg_terminate_backend(pid, 5000) FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
			AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`, key)
	}
	if s.mysql != nil {
		s.mysql.steal(t, key)
	}
}
