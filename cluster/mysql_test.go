package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// TestMySQLServer starts one MariaDB through the kind's home, as a local
// process and as a container, and puts it through what the lab asks of
// every server: a role, the cheapest request, a cost counter that counts a
// client's statements, a pause, and a crash with a restart that keeps or
// loses the data.
func TestMySQLServer(t *testing.T) {
	for _, mode := range []string{ServersLocal, ServersContainers} {
		t.Run(mode, func(t *testing.T) {
			if mode == ServersContainers {
				containerMode(t)
			} else {
				t.Setenv(ServersEnv, ServersLocal)
			}
			testMySQLServer(t)
		})
	}
}

func testMySQLServer(t *testing.T) {
	ctx := context.Background()
	topo, err := Start(ctx, topology.Of(topology.Single(topology.MySQL)), External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	kind, err := KindOf(topology.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	n := topo.Lock(topology.MySQL)[0]
	ep := topo.Endpoints()[topology.MySQL]
	if !onThisMachine(n) || len(ep.Addrs) != 1 {
		t.Fatalf("node at %s, endpoint %v: want one server on loopback (or its container's network's gateway)", n.Addr, ep.Addrs)
	}
	exec := func(t *testing.T, q string) error {
		t.Helper()
		cfg, err := mysql.ParseDSN(ep.Addrs[0])
		if err != nil {
			t.Fatal(err)
		}
		cfg.Timeout, cfg.ReadTimeout = time.Second, time.Second
		c, done, err := mysqlConn(ctx, cfg)
		if err != nil {
			return err
		}
		defer done()
		_, err = c.ExecContext(ctx, q)
		return err
	}

	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"role is primary", func(t *testing.T) {
			if role, err := topo.Role(ctx, n.Name); err != nil || role != "primary" {
				t.Fatalf("role %q, %v; want primary", role, err)
			}
		}},
		{"cheapest request answers", func(t *testing.T) {
			send, done, err := kind.OpenCheapest(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			for range 3 {
				if err := send(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"served counts another client's statements, not its own reading", func(t *testing.T) {
			before, err := kind.Served(ctx, ep, true)
			if err != nil {
				t.Fatal(err)
			}
			send, done, err := kind.OpenCheapest(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if err := send(ctx); err != nil {
					t.Fatal(err)
				}
			}
			done()
			after, err := kind.Served(ctx, ep, true)
			if err != nil {
				t.Fatal(err)
			}
			// MariaDB counts the client's COM_QUIT as a question too.
			if got := after - before; got != 6 {
				t.Fatalf("served %v statements for 5 SELECT 1 and a quit, want 6", got)
			}
		}},
		{"served counts a prepared statement's prepare, which Questions leaves out", func(t *testing.T) {
			// go-sql-driver prepares, executes and closes a statement with
			// arguments unless the DSN says interpolateParams: two round
			// trips, where an interpolated one takes one.
			for _, tt := range []struct {
				interpolate bool
				want        float64
			}{{false, 2*5 + 1}, {true, 5 + 1}} {
				cfg, err := mysql.ParseDSN(ep.Addrs[0])
				if err != nil {
					t.Fatal(err)
				}
				cfg.InterpolateParams = tt.interpolate
				before, err := kind.Served(ctx, ep, true)
				if err != nil {
					t.Fatal(err)
				}
				c, done, err := mysqlConn(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 5 {
					var got int
					if err := c.QueryRowContext(ctx, "SELECT ?", i).Scan(&got); err != nil || got != i {
						t.Fatalf("SELECT %d: %d, %v", i, got, err)
					}
				}
				done()
				after, err := kind.Served(ctx, ep, true)
				if err != nil {
					t.Fatal(err)
				}
				if got := after - before; got != tt.want {
					t.Errorf("interpolateParams %v: served %v requests for 5 SELECT ? and a quit, want %v", tt.interpolate, got, tt.want)
				}
			}
		}},
		{"a paused server answers nothing until resumed", func(t *testing.T) {
			if err := n.Pause(); err != nil {
				t.Fatal(err)
			}
			err := exec(t, "SELECT 1")
			if rerr := n.Resume(); rerr != nil {
				t.Fatal(rerr)
			}
			if err == nil {
				t.Fatal("a SIGSTOPped server answered")
			}
			if err := exec(t, "SELECT 1"); err != nil {
				t.Fatalf("resumed server: %v", err)
			}
		}},
		{"a restart keeps its data when asked to", func(t *testing.T) {
			if err := exec(t, "CREATE TABLE kept (k INT PRIMARY KEY)"); err != nil {
				t.Fatal(err)
			}
			if err := n.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := n.Restart(ctx, true); err != nil {
				t.Fatal(err)
			}
			if err := exec(t, "SELECT * FROM kept"); err != nil {
				t.Fatalf("after a restart with data: %v", err)
			}
		}},
		{"a restart without data has the locks' database and nothing else", func(t *testing.T) {
			old := n.PID()
			if err := n.Restart(ctx, false); err != nil {
				t.Fatal(err)
			}
			if n.PID() == old {
				t.Error("restart kept the old pid")
			}
			if err := exec(t, "SELECT * FROM kept"); err == nil {
				t.Fatal("the table survived a restart without data")
			}
			if err := exec(t, "CREATE TABLE fresh (k INT PRIMARY KEY)"); err != nil {
				t.Fatalf("the locks' database after a restart without data: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
	pid := n.PID()
	topo.Close()
	if alive(pid) {
		t.Errorf("mariadbd pid %d outlived Close", pid)
	}
}

func TestMySQLStartErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T)
		opts  MySQLOptions
		want  string
		is    error
	}{
		{"missing binary names the package", func(t *testing.T) {
			t.Setenv(ServersEnv, ServersLocal)
			t.Setenv("PATH", t.TempDir())
			dirs := mysqlDirs
			mysqlDirs = nil
			t.Cleanup(func() { mysqlDirs = dirs })
		}, MySQLOptions{}, "apt-get install -y mariadb-server", ErrMissingBinary},
		{"a replica in container mode says local only, and why", func(t *testing.T) {
			t.Setenv(ServersEnv, ServersContainers)
		}, MySQLOptions{ReplicaOf: &Node{Name: "primary"}}, "local mode only: the lab starts it on a copy of its primary's data dir", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup(t)
			_, err := StartMySQL(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// On a host of its own, MariaDB binds the host's address and lets in the
// lab's probes, which come from the hosts' network, not from loopback.
func TestMySQLOnAHost(t *testing.T) {
	if err := hosts.Available(); err != nil {
		t.Skipf("no hosts here: %v", err)
	}
	ctx := context.Background()
	topo, err := Start(ctx, topology.Declaration{Groups: []topology.Group{topology.Single(topology.MySQL)}, Hosts: true}, External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	n := topo.Lock(topology.MySQL)[0]
	if n.Host == nil || strings.HasPrefix(n.Addr, "127.") {
		t.Fatalf("node at %s on host %v, want the host's own address", n.Addr, n.Host)
	}
	if role, err := topo.Role(ctx, n.Name); err != nil || role != "primary" {
		t.Fatalf("role %q, %v; want primary", role, err)
	}
}
