package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/topology"
)

// TestEndSessions: the server of each kind ends exactly the sessions whose
// client end this process's connections name, found from its own sockets,
// and a session left alone still answers.
func TestEndSessions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		kind topology.Kind
		// open returns a session's query (nil error while it lives).
		open func(t *testing.T, n *Node) func() error
	}{
		{topology.MySQL, func(t *testing.T, n *Node) func() error {
			cfg, err := mysql.ParseDSN(n.MySQLDSN())
			if err != nil {
				t.Fatal(err)
			}
			c, done, err := mysqlConn(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(done)
			return func() error {
				var one int
				return c.QueryRowContext(ctx, "SELECT 1").Scan(&one)
			}
		}},
		{topology.Postgres, func(t *testing.T, n *Node) func() error {
			c, err := pgx.Connect(ctx, n.DSN())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close(ctx) })
			return func() error {
				var one int
				return c.QueryRow(ctx, "SELECT 1").Scan(&one)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			topo, err := Start(ctx, topology.Of(topology.Single(tt.kind)), External{})
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			n := topo.Lock(tt.kind)[0]
			victim, bystander := tt.open(t, n), tt.open(t, n)
			for _, q := range []func() error{victim, bystander} {
				if err := q(); err != nil {
					t.Fatal(err)
				}
			}
			conns, err := ClientConnections(os.Getpid(), n.Addr)
			if err != nil || len(conns) != 2 {
				t.Fatalf("this process's connections to %s: %v, %v; want the two sessions'", n.Addr, conns, err)
			}
			// The two client ends come in no known order: end the first,
			// and exactly one of the two sessions must be gone.
			k, _ := KindOf(tt.kind)
			ender := k.(SessionEnder)
			ended, err := ender.EndSessions(ctx, n, conns[:1])
			if err != nil || ended != 1 {
				t.Fatalf("ended %d sessions, %v; want 1", ended, err)
			}
			time.Sleep(200 * time.Millisecond) // KILL returns before the session is gone
			var failed int
			for _, q := range []func() error{victim, bystander} {
				if q() != nil {
					failed++
				}
			}
			if failed != 1 {
				t.Fatalf("%d of two sessions failed after one was ended, want 1", failed)
			}
		})
	}
}

// procAddr reads the kernel's little-endian IPv4 words.
func TestProcAddr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"0A01A8C0:0050", "192.168.1.10:80"},
	}
	for _, tt := range tests {
		got, err := procAddr(tt.in)
		if err != nil || got.String() != tt.want {
			t.Errorf("procAddr(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}
