package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/topology"
)

// The MySQL replica topologies' replica follows the primary's binary log:
// a commit on the primary is on the replica once CatchUp returns, and the
// promoted replica accepts writes and follows nobody.
func TestMySQLReplicaFollowsAndPromotes(t *testing.T) {
	for _, name := range []string{topology.MySQLReplicaAsyncName, topology.MySQLReplicaSemisyncName} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			primary, replica := startReplicaPair(t, name, topology.MySQL, topology.MySQLReplicaName)
			exec := func(n *Node, stmt string) {
				t.Helper()
				c, done, err := mysqlOpen(ctx, n, MySQLDatabase)
				if err != nil {
					t.Fatal(err)
				}
				defer done()
				if _, err := c.ExecContext(ctx, stmt); err != nil {
					t.Fatalf("%s on %s: %v", stmt, n.Name, err)
				}
			}
			count := func(n *Node) int {
				t.Helper()
				c, done, err := mysqlOpen(ctx, n, MySQLDatabase)
				if err != nil {
					t.Fatal(err)
				}
				defer done()
				var k int
				if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM replicated").Scan(&k); err != nil {
					t.Fatalf("count on %s: %v", n.Name, err)
				}
				return k
			}
			// semisync reads how many commits the primary returned with and
			// without its replica's acknowledgement.
			semisync := func() (yes, no int) {
				t.Helper()
				c, done, err := mysqlOpen(ctx, primary, "")
				if err != nil {
					t.Fatal(err)
				}
				defer done()
				err = c.QueryRowContext(ctx, `SELECT
					(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_YES_TX'),
					(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_NO_TX')`).Scan(&yes, &no)
				if err != nil {
					t.Fatal(err)
				}
				return yes, no
			}
			yes0, no0 := semisync()
			exec(primary, "CREATE TABLE replicated (k INT) ENGINE=InnoDB")
			exec(primary, "INSERT INTO replicated VALUES (1)")
			note, err := (mysqlKind{}).CatchUp(ctx, primary, replica, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(note)
			if yes, no := semisync(); name == topology.MySQLReplicaSemisyncName && (yes-yes0 != 2 || no != no0) {
				// Both commits waited for the replica's acknowledgement;
				// none returned unacknowledged, as after a fallback to
				// asynchronous replication. (The primary's own writes
				// before its replica connected count as unacknowledged.)
				t.Fatalf("semi-synchronous commits on %s: %d acknowledged, %d not; want 2 and none", primary.Name, yes-yes0, no-no0)
			}
			if got := count(replica); got != 1 {
				t.Fatalf("rows on the replica once it caught up (%s): %d, want 1", note, got)
			}
			for want, n := range map[string]*Node{"primary": primary, "replica": replica} {
				if role, err := (mysqlKind{}).Role(ctx, n); err != nil || role != want {
					t.Fatalf("%s's role: %q, %v", n.Name, role, err)
				}
			}
			// As the fail-over does: the primary dies first, so the
			// promotion finds the replica cut off from it.
			if err := primary.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := (mysqlKind{}).Promote(ctx, replica); err != nil {
				t.Fatal(err)
			}
			if role, err := (mysqlKind{}).Role(ctx, replica); err != nil || role != "primary" {
				t.Fatalf("the promoted %s's role: %q, %v", replica.Name, role, err)
			}
			// A semi-synchronous primary's settings are not the replica's:
			// promoted, its commits wait for nobody.
			exec(replica, "INSERT INTO replicated VALUES (2)")
			if got := count(replica); got != 2 {
				t.Fatalf("rows on the promoted replica: %d, want 2", got)
			}
			// A promoted server follows nobody: waiting for it is an
			// error, not a wait for the whole bound. The primary is dead,
			// so it is asked of a restarted one.
			if err := primary.Restart(ctx, true); err != nil {
				t.Fatal(err)
			}
			if _, err := (mysqlKind{}).CatchUp(ctx, primary, replica, 30*time.Second); err == nil || !strings.Contains(err.Error(), "not a replica") {
				t.Fatalf("CatchUp to a promoted replica: %v, want it is not a replica", err)
			}
		})
	}
}
