package cluster

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/topology"
)

// The replica topologies' replica is a streaming standby of the primary:
// a commit on the synchronous primary is on the replica when it returns,
// and the promoted replica accepts writes.
func TestPostgresReplicaFollowsAndPromotes(t *testing.T) {
	named, err := topology.Lookup(topology.PGReplicaSyncName)
	if err != nil {
		t.Fatal(err)
	}
	decl, err := named.Declare(topology.Need{Kind: topology.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	topo, err := Start(ctx, decl, External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	primary, replica := topo.Node(string(topology.Postgres)), topo.Node(topology.PGReplicaName)
	if primary == nil || replica == nil {
		t.Fatalf("nodes started: primary %v, replica %v", primary, replica)
	}
	exec := func(n *Node, sql string) {
		t.Helper()
		c, err := pgx.Connect(ctx, n.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s on %s: %v", sql, n.Name, err)
		}
	}
	count := func(n *Node) int {
		t.Helper()
		c, err := pgx.Connect(ctx, n.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var k int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM replicated").Scan(&k); err != nil {
			t.Fatalf("count on %s: %v", n.Name, err)
		}
		return k
	}
	exec(primary, "CREATE TABLE replicated (k int)")
	exec(primary, "INSERT INTO replicated VALUES (1)")
	// remote flush is not remote apply: wait for the replica to replay it.
	for i := 0; count(replica) != 1; i++ {
		if i > 1000 {
			t.Fatal("the synchronous replica never showed the primary's committed row")
		}
	}
	for _, want := range []string{"primary", "replica"} {
		n := map[string]*Node{"primary": primary, "replica": replica}[want]
		if role, err := (postgresKind{}).Role(ctx, n); err != nil || role != want {
			t.Fatalf("%s's role: %q, %v", n.Name, role, err)
		}
	}
	if err := (postgresKind{}).Promote(ctx, replica); err != nil {
		t.Fatal(err)
	}
	exec(replica, "INSERT INTO replicated VALUES (2)")
	if got := count(replica); got != 2 {
		t.Fatalf("rows on the promoted replica: %d, want 2", got)
	}
}
