package nemesis

import (
	"context"
	"database/sql"
	"net"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// TestAckedStandbyLostNeedsASecondReplica: the kind applies on the
// two-replica database topologies, says why not on the one-replica ones
// and elsewhere, and in container mode says the backend's reason (the
// primary's address moves between the lab's hosts). No server starts.
func TestAckedStandbyLostNeedsASecondReplica(t *testing.T) {
	for _, tc := range []struct {
		impl, topology string
		why            string // part of the reason it does not apply; "" means it applies
		// inContainers is the reason in container mode, where it differs:
		// the primary's address moves between the lab's hosts, asked
		// before the replicas are counted.
		inContainers string
	}{
		{"pg-unique-insert", topology.PGReplicaSync2Name, "", "hosts"},
		{"mysql-lock-table", topology.MySQLReplicaSemisync2Name, "", "hosts"},
		{"pg-unique-insert", topology.PGReplicaSyncName, "declares one replica", "hosts"},
		{"mysql-lock-table", topology.MySQLReplicaSemisyncName, "declares one replica", "hosts"},
		{"pg-advisory", topology.SingleName, "declares no replica", ""},
		{"redis-setnx-px", topology.RedisSentinelName, "servers have none the lab promotes", ""},
	} {
		for _, backend := range []string{"local", "containers"} {
			t.Run(backend+"/"+tc.impl+"@"+tc.topology, func(t *testing.T) {
				t.Setenv("LOCKLAB_SERVERS", backend)
				why := tc.why
				if backend == "containers" && tc.inContainers != "" {
					why = tc.inContainers
				}
				checkLagApplies(t, AckedStandbyLost, tc.impl, tc.topology, why, false)
			})
		}
	}
}

// TestGenerateDrawsAckedStandbyLost: explore draws the kind on the
// two-replica topology, aimed at the primary, as its schedule's last fault.
func TestGenerateDrawsAckedStandbyLost(t *testing.T) {
	spec, err := impls.Lookup("pg-unique-insert")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := TopologyFor(spec, topology.PGReplicaSync2Name, 4)
	if err != nil {
		t.Fatal(err)
	}
	if topo.NoHosts != "" {
		t.Skip(topo.NoHosts)
	}
	ks, skipped, err := Applicable(spec, topo, []string{AckedStandbyLost})
	if err != nil || len(ks) != 1 {
		t.Fatalf("drawable: %v; skipped: %v; %v", ks, skipped, err)
	}
	drawn := 0
	for seed := int64(1); seed <= 10; seed++ {
		s := Generate(Plan{Seed: seed, Impl: spec.Name, TTL: time.Second, Bound: testBound, Clients: 4,
			Duration: time.Minute, Topology: topo, Kinds: ks})
		s.Topology = topology.PGReplicaSync2Name
		if err := s.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, st := range s.Faults {
			if st.Kind != AckedStandbyLost || st.Target != "postgres" {
				t.Errorf("seed %d: %s aimed at %q", seed, st.Kind, st.Target)
			}
			drawn++
		}
	}
	if drawn == 0 {
		t.Error("acked-standby-lost never drawn in 10 seeds")
	}
}

// allServers is topoSystem with every started server a lock server, as
// the engine's system counts a database's replicas.
type allServers struct{ topoSystem }

func (s allServers) LockServers() []string {
	var out []string
	for _, n := range s.topo.Nodes() {
		out = append(out, n.Name)
	}
	return out
}

// rowStore writes and counts the test's one row on a real server, through
// the lab's own path to it (the hosts' switch).
type rowStore struct {
	kind topology.Kind
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (r rowStore) exec(ctx context.Context, n *cluster.Node, stmt string) error {
	if r.kind == topology.Postgres {
		cfg, err := pgx.ParseConfig(n.DSN())
		if err != nil {
			return err
		}
		cfg.DialFunc = r.dial
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, stmt)
		return err
	}
	db, err := r.mysql(n)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

func (r rowStore) count(ctx context.Context, n *cluster.Node) (int, error) {
	var k int
	if r.kind == topology.Postgres {
		cfg, err := pgx.ParseConfig(n.DSN())
		if err != nil {
			return 0, err
		}
		cfg.DialFunc = r.dial
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return 0, err
		}
		defer c.Close(ctx)
		return k, c.QueryRow(ctx, "SELECT count(*) FROM acked").Scan(&k)
	}
	db, err := r.mysql(n)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return k, db.QueryRowContext(ctx, "SELECT count(*) FROM acked").Scan(&k)
}

func (r rowStore) mysql(n *cluster.Node) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(n.MySQLDSN())
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = r.dial
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// TestAckedStandbyLostLosesAnAcknowledgedCommit starts each two-replica
// topology on the lab's hosts and runs the kind on it, with no lock: once
// it settles, a commit on the primary returns (acknowledged by a replica:
// PostgreSQL's ANY 1 quorum, MariaDB's semi-sync) and is on the replica
// that keeps up within a second, while the held-back one still lacks it
// two seconds on; the strike promotes the held-back one, whose record
// says it lacked the primary's last writes, and the committed row is not
// on it. About 6 s for each topology (11.5 s in all) on a loaded
// 2-core machine, most of it the servers' start.
func TestAckedStandbyLostLosesAnAcknowledgedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	if err := hosts.Available(); err != nil {
		t.Skipf("the fault holds a stream and moves an address on the lab's hosts: %v", err)
	}
	if err := netfault.DelayAvailable(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		topology string
		kind     topology.Kind
		create   string
	}{
		{topology.PGReplicaSync2Name, topology.Postgres, "CREATE TABLE acked (k int)"},
		{topology.MySQLReplicaSemisync2Name, topology.MySQL, "CREATE TABLE acked (k int)"},
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
			decl = topology.Fast.Apply(decl)
			decl.Hosts = true
			topo, err := cluster.Start(ctx, decl, cluster.External{})
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			sys := allServers{topoSystem{topo}}
			primary, acks, promoted, _, err := standbys(sys, string(tc.kind))
			if err != nil {
				t.Fatal(err)
			}
			rows := rowStore{kind: tc.kind, dial: topo.Net.DialContext}
			if err := rows.exec(ctx, primary, tc.create); err != nil {
				t.Fatal(err)
			}
			k := ackedStandbyLost{}
			note, err := k.Settle(ctx, sys, primary.Name)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(note)
			defer healLag(context.WithoutCancel(ctx), sys)
			if err := rows.exec(ctx, primary, "INSERT INTO acked VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			committed, err := cluster.WritePosition(ctx, primary)
			if err != nil {
				t.Fatal(err)
			}
			lacks := func(n *cluster.Node) int64 {
				t.Helper()
				held, err := cluster.HeldPosition(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				return held.Lacks(committed)
			}
			// The replica that acknowledged has the commit (its position,
			// the servers' word); a second is room for the position's
			// report to catch up with what it flushed.
			for deadline := time.Now().Add(time.Second); lacks(acks) > 0; {
				if time.Now().After(deadline) {
					t.Fatalf("%s lacks %d of %s's %s a second after the commit returned", acks.Name, lacks(acks), primary.Name, committed.Said)
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(2 * time.Second)
			if got := lacks(promoted); got == 0 {
				t.Fatalf("%s has all of %s's %s two seconds after the commit: the hold did not keep it behind", promoted.Name, primary.Name, committed.Said)
			}
			struck, err := k.Inject(ctx, sys, primary.Name)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(struck)
			rec := TakePromotion(sys, primary.Name)
			if rec == nil || !rec.Lacked() || rec.Promoted != promoted.Name {
				t.Fatalf("promotion record %+v, want %s promoted lacking the primary's last writes", rec, promoted.Name)
			}
			n, err := rows.count(ctx, promoted)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("the promoted %s has %d rows, want 0: the acknowledged commit should be lost with %s (%+v)", promoted.Name, n, acks.Name, *rec)
			}
		})
	}
}
