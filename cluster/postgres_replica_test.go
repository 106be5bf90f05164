package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/topology"
)

// The replica topologies' replica is a streaming standby of the primary:
// a commit on the primary is on the replica once CatchUp returns, and the
// promoted replica accepts writes.
func TestPostgresReplicaFollowsAndPromotes(t *testing.T) {
	ctx := context.Background()
	primary, replica := startReplicaPair(t, topology.PGReplicaSyncName, topology.Postgres, topology.PGReplicaName)
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
	// The commits wait for no standby and not even for the local flush,
	// as on the lab's asynchronous primary: only CatchUp makes the row
	// sure to be on the replica.
	exec(primary, "SET synchronous_commit = off; CREATE TABLE replicated (k int)")
	exec(primary, "SET synchronous_commit = off; INSERT INTO replicated VALUES (1)")
	note, err := (postgresKind{}).CatchUp(ctx, primary, replica, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := count(replica); got != 1 {
		t.Fatalf("rows on the replica once it caught up (%s): %d, want 1", note, got)
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
	// A promoted server replays nothing: waiting for it is an error, not
	// a wait for ever.
	if _, err := (postgresKind{}).CatchUp(ctx, primary, replica, 30*time.Second); err == nil || !strings.Contains(err.Error(), "not a replica") {
		t.Fatalf("CatchUp to a promoted replica: %v, want it is not a replica", err)
	}
	if got := count(replica); got != 2 {
		t.Fatalf("rows on the promoted replica: %d, want 2", got)
	}
}

// startReplicaPair starts the named topology of kind, a primary and its
// replica (replicaName), closed when the test ends.
func startReplicaPair(t *testing.T, name string, kind topology.Kind, replicaName string) (primary, replica *Node) {
	t.Helper()
	named, err := topology.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	decl, err := named.Declare(topology.Need{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	skipUnlessStartsHere(t, decl)
	topo, err := Start(context.Background(), decl, External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topo.Close() })
	primary, replica = topo.Node(string(kind)), topo.Node(replicaName)
	if primary == nil || replica == nil {
		t.Fatalf("nodes started: primary %v, replica %v", primary, replica)
	}
	return primary, replica
}
