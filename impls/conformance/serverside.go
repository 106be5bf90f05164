package conformance

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// server is the suite's own view of a lock's backend: plain clients, apart
// from the lock's, that read back what the lock wrote and plant the state a
// lock never creates itself but production has (a key written by hand, a
// node left by another library, a row from an older deployment).
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

func waitSession(t *testing.T, events <-chan zk.Event) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return
			}
		case <-timeout:
			t.Fatal("no ZooKeeper session within 10s")
		}
	}
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

// zkNodes lists every znode whose path contains key (escaped or not), with
// its flags, walking the whole tree but /zookeeper.
func (s *server) zkNodes(t *testing.T, key string) []zkNode {
	t.Helper()
	var out []zkNode
	var walk func(p string)
	walk = func(p string) {
		children, _, err := s.zk.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return
		}
		if err != nil {
			t.Fatalf("children of %s: %v", p, err)
		}
		for _, c := range children {
			cp := path.Join(p, c)
			if cp == "/zookeeper" {
				continue
			}
			if strings.Contains(cp, key) {
				_, stat, err := s.zk.Get(cp)
				if errors.Is(err, zk.ErrNoNode) {
					continue
				}
				if err != nil {
					t.Fatalf("get %s: %v", cp, err)
				}
				out = append(out, zkNode{path: cp, ephemeral: stat.EphemeralOwner != 0, czxid: stat.Czxid})
			}
			walk(cp)
		}
	}
	walk("/")
	return out
}

type zkNode struct {
	path      string
	ephemeral bool
	czxid     int64
}

// zkLockDir is the directory under which a lock keeps its contenders for
// key: the parent of the ephemeral nodes a held lock has.
func (s *server) zkLockDir(t *testing.T, l impls.Locker, key string) string {
	t.Helper()
	lease := mustAcquire(t, l, key)
	defer mustRelease(t, lease)
	for _, n := range s.zkNodes(t, key) {
		if n.ephemeral {
			return path.Dir(n.path)
		}
	}
	t.Fatalf("a held lock on %q has no ephemeral node: %v", key, s.zkNodes(t, key))
	return ""
}

// pg runs one statement on a connection of the suite's own.
func (s *server) pg(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// pgTables lists the lab's lock tables that have a row for key.
func (s *server) pgTables(t *testing.T, key string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = 'public' AND column_name = 'key' AND table_name LIKE 'locklab_%'`)
	if err != nil {
		t.Fatalf("list lock tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("list lock tables: %v", err)
	}
	var out []string
	for _, tb := range tables {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{tb}.Sanitize()+" WHERE key = $1", key).Scan(&n); err != nil {
			t.Fatalf("rows of %s: %v", tb, err)
		}
		if n > 0 {
			out = append(out, tb)
		}
	}
	return out
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

// pgCount runs a count query on a connection of the suite's own.
func (s *server) pgCount(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// pgEndRowHolder ends the session whose transaction holds key's row in
// locklab_row_lock, if one does. PostgreSQL names a row lock's holder only
// to a transaction waiting for it, so a session of ours waits for the row
// and pg_blocking_pids says who blocks it.
func (s *server) pgEndRowHolder(t *testing.T, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	waiter, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer waiter.Close(context.Background())
	var exists bool
	if err := waiter.QueryRow(ctx, "SELECT to_regclass('locklab_row_lock') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return
	}
	var pid int32
	if err := waiter.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT key FROM locklab_row_lock WHERE key = $1 FOR UPDATE", key)
		got <- err
	}()
	deadline := time.Now().Add(2 * time.Second)
	for {
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("probe the row lock: %v", err)
			}
			return // nobody held it
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiter on %q's row neither got it nor named its holder", key)
		}
		ended := s.pg(t, `SELECT pg_terminate_backend(b, 5000) FROM unnest(pg_blocking_pids($1)) AS b`, pid)
		if ended > 0 {
			if err := <-got; err != nil {
				t.Fatalf("the row after its holder's session ended: %v", err)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
