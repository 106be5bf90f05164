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

// runServerSide holds a key and reads the servers' side back: every key,
// node, row and session lock the lock made, and nothing else, must be the
// documented one, with the documented type, expiry and flags.
//
// What is documented is the lock's own declaration (impls.Spec's
// Footprint), beside its code, not a table here: the suite knows how to
// read each server kind back (serverside*.go), a lock package never imports
// the suite, and a new lock brings its shape with its registration.
func runServerSide(t *testing.T, e *env) {
	e.check(t, "ServerSideShape", func(t *testing.T) {
		want := e.spec.Footprint
		if !want.Declared() {
			t.Skipf("no documented server-side shape for %s: declare its Footprint in its impls.Spec", e.spec.Name)
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
			for _, w := range want.Redis {
				var missing []int
				holders := e.srv.redisHolders(t, k(w.Name))
				for _, node := range holders {
					var found *redisKey
					for i := range got {
						if got[i].node == node && got[i].name == k(w.Name) {
							found = &got[i]
						}
					}
					if found == nil {
						missing = append(missing, node)
						continue
					}
					seen[fmt.Sprint(node, found.name)] = true
					if found.typ != w.Type {
						t.Errorf("%s, documented as a %s", found, w.Type)
					}
					if w.Expires && (found.ttl <= 0 || found.ttl > e.o.TTL) {
						t.Errorf("%s, documented to expire within the TTL %v", found, e.o.TTL)
					}
					if !w.Expires && found.ttl != -1 {
						t.Errorf("%s, documented with no expiry", found)
					}
					if w.IsToken {
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
					t.Errorf("the server has no %q (documented: %s)", k(w.Name), w.Type)
				case len(missing) > n-quorum.Majority(n):
					t.Errorf("nodes %v have no %q (documented: %s): fewer than a majority of %d hold it", missing, k(w.Name), w.Type, n)
				case len(missing) > 0:
					t.Logf("nodes %v have no %q: their requests outran the per-node timeout; a majority holds it", missing, k(w.Name))
				}
			}
			for _, g := range got {
				if !seen[fmt.Sprint(g.node, g.name)] {
					t.Errorf("undocumented key: %s", g)
				}
			}
		}

		if e.srv.zk != nil {
			child, err := regexp.Compile(want.ZKChild)
			if err != nil {
				t.Fatalf("the declared ZKChild of %s: %v", e.spec.Name, err)
			}
			nodes := e.srv.zkNodes(t, key)
			var children []string
			var dirCzxid int64 // the directory is listed before its children
			for _, n := range nodes {
				switch {
				case n.path == k(want.ZKDir):
					dirCzxid = n.czxid
					if n.ephemeral {
						t.Errorf("the lock directory %s is ephemeral, documented persistent", n.path)
					}
				case path.Dir(n.path) == k(want.ZKDir):
					children = append(children, path.Base(n.path))
					if !n.ephemeral {
						t.Errorf("contender %s is persistent, documented ephemeral", n.path)
					}
					if !child.MatchString(path.Base(n.path)) {
						t.Errorf("contender %s is not named as documented (%s)", n.path, child)
					}
					// zookeeper's token is its directory's czxid plus the
					// contender's sequence number (zklock's lease.Token).
					// The sequence is the name's last ten digits.
					seq, _ := strconv.ParseInt(n.path[max(0, len(n.path)-10):], 10, 64)
					if fenced && uint64(dirCzxid+seq) != tok {
						t.Errorf("contender %s: directory czxid %d + sequence %d, the lease's token is %d", n.path, dirCzxid, seq, tok)
					}
				default:
					t.Errorf("undocumented znode %s (documented directory %s)", n.path, k(want.ZKDir))
				}
			}
			if len(children) != 1 {
				t.Errorf("a held, uncontended lock has contenders %v in %s, want exactly one", children, k(want.ZKDir))
			}
		}

		if e.srv.pgDSN != "" {
			tables := e.srv.pgTables(t, key)
			sort.Strings(tables)
			var wantTables []string
			if want.PGTable != "" {
				wantTables = []string{want.PGTable}
			}
			if fmt.Sprint(tables) != fmt.Sprint(wantTables) {
				t.Errorf("rows for the key in %v, documented %v", tables, wantTables)
			}
			if want.PGVersionIsToken {
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
					pgx.Identifier{want.PGTable}.Sanitize()+` WHERE key = $1`, key).Scan(&version, &left); err != nil {
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
			if rowLocked != want.PGRowLocked {
				t.Errorf("the key's row in locklab_row_lock locked: %v, documented %v", rowLocked, want.PGRowLocked)
			}
			advisory := e.srv.pgCount(t, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
				AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`, key)
			if want.PGAdvisory != (advisory == 1) {
				t.Errorf("%d advisory locks on the key's hash, documented %v", advisory, want.PGAdvisory)
			}
		}

		if e.srv.mysql != nil {
			e.srv.mysql.checkShape(t, want, key, tok, fenced, e.o.TTL+time.Since(sent))
		}
	})
}
