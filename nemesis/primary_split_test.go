package nemesis

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// splitSystem is the part of System a split uses, over a real topology
// and client hosts with no client processes on them.
type splitSystem struct {
	topoSystem
	clients []*hosts.Host
	servers []string
}

func (s splitSystem) Clients() int          { return len(s.clients) }
func (s splitSystem) LockServers() []string { return s.servers }
func (s splitSystem) ClientHost(slot int) (*hosts.Host, error) {
	if slot < 0 || slot >= len(s.clients) {
		return nil, fmt.Errorf("no client slot %d", slot)
	}
	return s.clients[slot], nil
}

// sideClient runs statements at n's address from host h, the way a
// lock's client there reaches it (h's own network namespace, and so its
// re-pointing rule), each on a connection of its own: one dialled after
// the cut is re-pointed, and none is left hanging on the old primary.
type sideClient struct {
	h    *hosts.Host
	n    *cluster.Node
	side string
}

// session opens a connection and hands it to f as a *sql.Conn or a
// *pgx.Conn's exec and query.
func (c sideClient) session(ctx context.Context, f func(exec func(string) error, query func(string) ([]string, error)) error) error {
	switch c.n.Kind {
	case topology.Postgres:
		cfg, err := pgx.ParseConfig(c.n.DSN())
		if err != nil {
			return err
		}
		cfg.DialFunc = c.h.DialContext
		cfg.ConnectTimeout = 2 * time.Second
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return f(func(q string) error { _, err := conn.Exec(ctx, q); return err },
			func(q string) ([]string, error) {
				rows, err := conn.Query(ctx, q)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(rows, pgx.RowTo[string])
			})
	case topology.MySQL:
		cfg, err := mysql.ParseDSN(c.n.MySQLDSN())
		if err != nil {
			return err
		}
		cfg.DialFunc = c.h.DialContext
		cfg.Timeout = 2 * time.Second
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			return err
		}
		db := sql.OpenDB(connector)
		defer db.Close()
		return f(func(q string) error { _, err := db.ExecContext(ctx, q); return err },
			func(q string) ([]string, error) {
				rows, err := db.QueryContext(ctx, q)
				if err != nil {
					return nil, err
				}
				defer rows.Close()
				var out []string
				for rows.Next() {
					var v string
					if err := rows.Scan(&v); err != nil {
						return nil, err
					}
					out = append(out, v)
				}
				return out, rows.Err()
			})
	}
	return fmt.Errorf("no database client for %s", c.n.Kind)
}

// exec runs q, dialling again until it answers or ctx ends.
func (c sideClient) exec(ctx context.Context, q string) error {
	for {
		err := c.session(ctx, func(exec func(string) error, _ func(string) ([]string, error)) error { return exec(q) })
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// values reads split_check's values in order, dialling again until it
// answers or ctx ends.
func (c sideClient) values(ctx context.Context) ([]string, error) {
	for {
		var out []string
		err := c.session(ctx, func(_ func(string) error, query func(string) ([]string, error)) error {
			var err error
			out, err = query("SELECT v FROM split_check ORDER BY v")
			return err
		})
		if err == nil || ctx.Err() != nil {
			return out, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPrimarySplitLeavesTwoPrimaries splits a real asynchronous primary
// from its real replica with clients on both sides and checks what the
// clients see at the one address they know: the old side's client commits
// on the old primary, the other side's on the promoted replica, neither
// sees the other's write; the probe saw the old primary commit through
// the split; after the heal the address reaches the promoted replica from
// the old side too. About 15 s (MariaDB's data directory is most of it).
func TestPrimarySplitLeavesTwoPrimaries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	if err := hosts.Available(); err != nil {
		t.Skipf("a split drops packets between hosts: %v", err)
	}
	for _, tc := range []struct {
		topology string
		kind     topology.Kind
	}{
		{topology.PGReplicaAsyncName, topology.Postgres},
		{topology.MySQLReplicaAsyncName, topology.MySQL},
	} {
		t.Run(tc.topology, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			named, err := topology.Lookup(tc.topology)
			if err != nil {
				t.Fatal(err)
			}
			decl, err := named.Declare(topology.Need{Kind: tc.kind})
			if err != nil {
				t.Fatal(err)
			}
			decl.Hosts = true
			topo, err := cluster.Start(ctx, decl, cluster.External{})
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			sys := splitSystem{topoSystem: topoSystem{topo}}
			for i := range 4 {
				h, err := topo.Net.AddHost(ctx, fmt.Sprintf("client-%d", i))
				if err != nil {
					t.Fatal(err)
				}
				sys.clients = append(sys.clients, h)
			}
			for _, n := range topo.Nodes() {
				sys.servers = append(sys.servers, n.Name)
			}
			primary := topo.Lock(tc.kind)[0]
			oldSide := sideClient{h: sys.clients[1], n: primary, side: "old side (client-1)"}
			newSide := sideClient{h: sys.clients[2], n: primary, side: "other side (client-2)"}
			if err := oldSide.exec(ctx, "CREATE TABLE split_check (v varchar(16) PRIMARY KEY)"); err != nil {
				t.Fatal(err)
			}
			// The replica must have the table, as the scenario's settle
			// makes it have the lock's.
			settled, err := primarySplit{}.Settle(ctx, sys, primary.Name)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(settled)

			target := Link("client-0", primary.Name)
			note, err := primarySplit{}.Inject(ctx, sys, target)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(note)
			// Each side writes its own row at the one address and reads
			// back only its own: two primaries, each taking its side's
			// commits.
			for _, w := range []struct {
				c sideClient
				v string
			}{{oldSide, "old"}, {newSide, "new"}} {
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err := w.c.exec(wctx, "INSERT INTO split_check VALUES ('"+w.v+"')")
				var got []string
				if err == nil {
					got, err = w.c.values(wctx)
				}
				cancel()
				if err != nil {
					t.Fatalf("%s at %s: %v", w.c.side, primary.Addr, err)
				}
				if !slices.Equal(got, []string{w.v}) {
					t.Errorf("%s reads %v at %s; want only its own row %q", w.c.side, got, primary.Addr, w.v)
				}
			}
			healed, err := primarySplit{}.Heal(ctx, sys, target)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(healed)
			figures := primarySplit{}.Measured(sys, target)
			if figures["old-primary-commits"] < 1 || figures["promoted-ms"] < 0 {
				t.Errorf("the watch's figures %v: want the old primary's commits through the split and the promotion", figures)
			}
			// Healed: the old primary is dead and its address the
			// promoted replica's, from the old side too.
			afterHeal := sideClient{h: sys.clients[0], n: primary, side: "old side (client-0)"}
			hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
			got, err := afterHeal.values(hctx)
			hcancel()
			if err != nil || !slices.Equal(got, []string{"new"}) {
				t.Errorf("after the heal, the old side reads %v, %v at %s; want the promoted replica's %q", got, err, primary.Addr, "new")
			}
		})
	}
}

// TestPrimarySplitApplies: the split applies to the database locks on
// the replica topologies, on the lab's hosts, and says why not
// elsewhere; explore draws it there, aimed at the primary.
func TestPrimarySplitApplies(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		why            string // part of the reason it does not apply; "" means it applies
	}{
		{"pg-advisory", topology.PGReplicaAsyncName, ""},
		{"pg-optimistic", topology.PGReplicaSyncName, ""},
		{"mysql-get-lock", topology.MySQLReplicaSemisyncName, ""},
		{"pg-advisory", topology.SingleName, "declares no replica"},
		{"redis-setnx-px", topology.RedisSentinelName, "promotes"},
	} {
		for _, backend := range []string{"local", "containers"} {
			t.Run(backend+"/"+tc.impl+"@"+tc.topology, func(t *testing.T) {
				t.Setenv("LOCKLAB_SERVERS", backend)
				checkLagApplies(t, PrimarySplitWithClients, tc.impl, tc.topology, tc.why, true)
				if tc.why != "" {
					return
				}
				spec, err := impls.Lookup(tc.impl)
				if err != nil {
					t.Fatal(err)
				}
				topo, err := TopologyFor(spec, tc.topology, 4)
				if err != nil {
					t.Fatal(err)
				}
				if topo.NoHosts != "" {
					return
				}
				ks, _, err := Applicable(spec, topo, []string{PrimarySplitWithClients})
				if err != nil {
					t.Fatal(err)
				}
				for seed := range int64(20) {
					s := Generate(Plan{Impl: tc.impl, Topology: topo, Kinds: ks, Seed: seed, Clients: 4, TTL: time.Second,
						Bound: testBound, Duration: 30 * time.Second})
					for _, st := range s.Faults {
						if st.Target != PrimaryTarget {
							t.Fatalf("seed %d: %s aimed at %q, want %q", seed, st.Kind, st.Target, PrimaryTarget)
						}
					}
					if len(s.Faults) > 0 {
						s.Topology = tc.topology
						if err := s.Validate(); err != nil && !strings.Contains(err.Error(), "after the run ends") {
							t.Fatalf("seed %d: %v", seed, err)
						}
						return
					}
				}
				t.Fatal("20 seeds drew no split")
			})
		}
	}
}
