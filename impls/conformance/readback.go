package conformance

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/locklab/locklab/quorum"
)

// shape is what a lock says it keeps on its server while it holds a key K
// (its Summary and doc comments), written down so a test can read the
// server's side back and compare. K stands for the lock key.
type shape struct {
	redis []redisShape
	// zkDir is the lock's directory (persistent); zkChild matches the name
	// of each contender's node in it (ephemeral, sequential).
	zkDir   string
	zkChild *regexp.Regexp
	// pgTable is the table holding one row per key; pgVersionIsToken says
	// its version column is the lease's fencing token.
	pgTable          string
	pgVersionIsToken bool
	pgAdvisory       bool // a session advisory lock on hashtextextended(K, 0)
	// pgRowLocked: the key's row is locked by the lease's transaction.
	pgRowLocked bool
	// mysqlTable is the MySQL table holding a row for K while held (for
	// locklab_row_lock, a row the lease's transaction has locked);
	// mysqlGetLock says a session holds the GET_LOCK name of K.
	mysqlTable   string
	mysqlGetLock bool
	// mysqlVersionIsToken: the row's version column is the lease's token.
	mysqlVersionIsToken bool
}

type redisShape struct {
	name    string // with K for the lock key
	typ     string
	expires bool // a TTL of at most the lease's; false: no expiry
	// isToken: the key's value is the lease's fencing token (the counter
	// the token was drawn from).
	isToken bool
}

var (
	setnxShape = []redisShape{{"{K}", "string", true, false}, {"{K}:fence", "string", false, true}}
	// protectedChild is go-zookeeper's protected node name (and the lab's).
	protectedChild = regexp.MustCompile(`^_c_[0-9a-f]{32}-lock-[0-9]{10}$`)
	// curatorChild is Curator's: the same form, its GUID a dashed UUID.
	curatorChild = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-[0-9]{10}$`)
)

// documented is every lock's server-side shape, from its Summary and docs.
var documented = map[string]shape{
	"redis-setnx-px":          {redis: setnxShape},
	"redis-setnx-px-wait":     {redis: setnxShape}, // redis-setnx-px's keys; the WAIT leaves nothing
	"redis-del-release":       {redis: setnxShape},
	"redis-get-del-release":   {redis: setnxShape},
	"redis-setnx-expire":      {redis: []redisShape{{"{K}", "string", true, false}}},
	"redis-lua-setnx-expire":  {redis: []redisShape{{"{K}", "string", true, false}}},
	"redis-getset":            {redis: []redisShape{{"{K}", "string", false, false}}}, // "the key has no Redis TTL"
	"redis-getset-own-expiry": {redis: []redisShape{{"{K}", "string", false, false}}},
	"redis-reentrant":         {redis: []redisShape{{"redisson:{K}", "hash", true, false}}},
	"redis-reentrant-fenced":  {redis: []redisShape{{"redisson:{K}", "hash", true, false}, {"redisson:{K}:fence", "string", false, true}}},
	"redis-fair":              {redis: []redisShape{{"fair:{K}", "hash", true, false}, {"fair:{K}:fence", "string", false, true}}},
	"redlock":                 {redis: []redisShape{{"K", "string", true, false}}},
	"peer-redislock":          {redis: []redisShape{{"K", "string", true, false}}},
	"peer-redsync":            {redis: []redisShape{{"K", "string", true, false}}},
	"peer-redsync-5":          {redis: []redisShape{{"K", "string", true, false}}},
	"zookeeper":               {zkDir: "/locklab/locks/K", zkChild: protectedChild},
	"peer-zk-lock":            {zkDir: "/locklab/peer-locks/K", zkChild: protectedChild},
	"guest:curator":           {zkDir: "/locklab/locks/K", zkChild: curatorChild}, // on the zookeeper lock's path, so both contend
	"pg-unique-insert":        {pgTable: "locklab_unique_lock"},
	"pg-optimistic":           {pgTable: "locklab_optimistic_lock", pgVersionIsToken: true},
	"pg-advisory":             {pgAdvisory: true},
	"pg-for-update":           {pgTable: "locklab_row_lock", pgRowLocked: true},
	"mysql-lock-table":        {mysqlTable: "locklab_lock_table"},
	"mysql-for-update":        {mysqlTable: "locklab_row_lock"},
	"mysql-get-lock":          {mysqlGetLock: true},
	"mysql-optimistic":        {mysqlTable: "locklab_optimistic_lock", mysqlVersionIsToken: true},
}

// runServerSide holds a key and reads the servers' side back: every key,
// node, row and session lock the lock made, and nothing else, must be the
// documented one, with the documented type, expiry and flags.
func runServerSide(t *testing.T, e *env) {
	e.check(t, "ServerSideShape", func(t *testing.T) {
		want, ok := documented[e.spec.Name]
		if !ok {
			t.Skipf("no documented server-side shape for %s: add one to documented in impls/conformance/readback.go", e.spec.Name)
		}
		key := freshKey(t)
		sent := time.Now()
		lease := mustAcquire(t, e.newLocker(t), key)
		defer mustRelease(t, lease)
		tok, fenced := lease.Token()
		k := func(s string) string { return strings.ReplaceAll(s, "K", key) }

		if len(e.srv.redis) > 0 {
			got := e.srv.redisKeys(t, key)
			// A lock granted by the first majority of its nodes to answer
			// (redlock) may still be writing to the others: give them
			// what its slowest request may take before reading again.
			if nodes := map[int]bool{}; len(e.srv.redis) > 1 && e.srv.cluster == nil {
				for _, k := range got {
					nodes[k.node] = true
				}
				if len(nodes) < len(e.srv.redis) {
					time.Sleep(100 * time.Millisecond)
					got = e.srv.redisKeys(t, key)
				}
			}
			seen := map[string]bool{}
			for _, w := range want.redis {
				var missing []int
				holders := e.srv.redisHolders(t, k(w.name))
				for _, node := range holders {
					var found *redisKey
					for i := range got {
						if got[i].node == node && got[i].name == k(w.name) {
							found = &got[i]
						}
					}
					if found == nil {
						missing = append(missing, node)
						continue
					}
					seen[fmt.Sprint(node, found.name)] = true
					if found.typ != w.typ {
						t.Errorf("%s, documented as a %s", found, w.typ)
					}
					if w.expires && (found.ttl <= 0 || found.ttl > e.o.TTL) {
						t.Errorf("%s, documented to expire within the TTL %v", found, e.o.TTL)
					}
					if !w.expires && found.ttl != -1 {
						t.Errorf("%s, documented with no expiry", found)
					}
					if w.isToken {
						v, err := e.srv.redis[node].Get(context.Background(), found.name).Result()
						if err != nil {
							t.Fatalf("GET %q: %v", found.name, err)
						}
						if !fenced || v != strconv.FormatUint(tok, 10) {
							t.Errorf("%q holds %s, but the lease's token is %d (fenced %v)", found.name, v, tok, fenced)
						}
					}
				}
				// A lock over several nodes is granted by a majority; a
				// node whose request outran the per-node timeout (a
				// container's network under load) rightly holds nothing,
				// as long as a majority does.
				switch n := len(holders); {
				case n == 1 && len(missing) > 0:
					t.Errorf("the server has no %q (documented: %s)", k(w.name), w.typ)
				case len(missing) > n-quorum.Majority(n):
					t.Errorf("nodes %v have no %q (documented: %s): fewer than a majority of %d hold it", missing, k(w.name), w.typ, n)
				case len(missing) > 0:
					t.Logf("nodes %v have no %q: their requests outran the per-node timeout; a majority holds it", missing, k(w.name))
				}
			}
			for _, g := range got {
				if !seen[fmt.Sprint(g.node, g.name)] {
					t.Errorf("undocumented key: %s", g)
				}
			}
		}

		if e.srv.zk != nil {
			nodes := e.srv.zkNodes(t, key)
			var children []string
			var dirCzxid int64 // the directory is listed before its children
			for _, n := range nodes {
				switch {
				case n.path == k(want.zkDir):
					dirCzxid = n.czxid
					if n.ephemeral {
						t.Errorf("the lock directory %s is ephemeral, documented persistent", n.path)
					}
				case path.Dir(n.path) == k(want.zkDir):
					children = append(children, path.Base(n.path))
					if !n.ephemeral {
						t.Errorf("contender %s is persistent, documented ephemeral", n.path)
					}
					if !want.zkChild.MatchString(path.Base(n.path)) {
						t.Errorf("contender %s is not named as documented (%s)", n.path, want.zkChild)
					}
					// zookeeper's token is its directory's czxid plus the
					// contender's sequence number (zklock's lease.Token).
					// The sequence is the name's last ten digits.
					seq, _ := strconv.ParseInt(n.path[max(0, len(n.path)-10):], 10, 64)
					if fenced && uint64(dirCzxid+seq) != tok {
						t.Errorf("contender %s: directory czxid %d + sequence %d, the lease's token is %d", n.path, dirCzxid, seq, tok)
					}
				default:
					t.Errorf("undocumented znode %s (documented directory %s)", n.path, k(want.zkDir))
				}
			}
			if len(children) != 1 {
				t.Errorf("a held, uncontended lock has contenders %v in %s, want exactly one", children, k(want.zkDir))
			}
		}

		if e.srv.pgDSN != "" {
			tables := e.srv.pgTables(t, key)
			sort.Strings(tables)
			var wantTables []string
			if want.pgTable != "" {
				wantTables = []string{want.pgTable}
			}
			if fmt.Sprint(tables) != fmt.Sprint(wantTables) {
				t.Errorf("rows for the key in %v, documented %v", tables, wantTables)
			}
			if want.pgVersionIsToken {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				conn, err := pgx.Connect(ctx, e.srv.pgDSN)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				var version int64
				var left time.Duration
				if err := conn.QueryRow(ctx, `SELECT version, expires_at - now() FROM `+
					pgx.Identifier{want.pgTable}.Sanitize()+` WHERE key = $1`, key).Scan(&version, &left); err != nil {
					t.Fatal(err)
				}
				if !fenced || uint64(version) != tok {
					t.Errorf("the row's version is %d, the lease's token %d", version, tok)
				}
				if left <= 0 || left > e.o.TTL+time.Since(sent) {
					t.Errorf("the row expires in %v, documented within the TTL %v", left, e.o.TTL)
				}
			}
			// A row held by another transaction is skipped by SKIP LOCKED:
			// a row that exists and is skipped is locked.
			rowLocked := false
			if len(tables) == 1 && tables[0] == "locklab_row_lock" {
				rowLocked = e.srv.pgCount(t, `SELECT count(*) FROM (SELECT 1 FROM locklab_row_lock WHERE key = $1
					FOR UPDATE SKIP LOCKED) AS r`, key) == 0
			}
			if rowLocked != want.pgRowLocked {
				t.Errorf("the key's row in locklab_row_lock locked: %v, documented %v", rowLocked, want.pgRowLocked)
			}
			advisory := e.srv.pgCount(t, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
				AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`, key)
			if want.pgAdvisory != (advisory == 1) {
				t.Errorf("%d advisory locks on the key's hash, documented %v", advisory, want.pgAdvisory)
			}
		}

		if e.srv.mysql != nil {
			e.srv.mysql.checkShape(t, want, key, tok, fenced, e.o.TTL+time.Since(sent))
		}
	})
}
