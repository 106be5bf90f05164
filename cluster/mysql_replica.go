package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/topology"
)

// followBound bounds each wait of a replica's start and promotion: the
// replica's threads start, and it applies what it has, in milliseconds, so
// a longer wait is a replica that does not follow.
const followBound = 30 * time.Second

// followPrimary makes the started server n a replica of primary. Both
// started on a copy of the same bootstrapped data dir (copyOfBootstrap),
// and the primary has written its binary log since its first start, so
// the replica needs no backup: following the primary's binary log from
// its beginning (an empty GTID position, MASTER_USE_GTID=slave_pos) brings
// it to the primary's state, as a replica made from a backup taken at that
// start would be. It returns once both of the replica's threads run (and,
// on a semi-synchronous primary, once the primary waits for this replica's
// acknowledgements).
func followPrimary(ctx context.Context, n, primary *Node) error {
	host, port, err := splitHostPort(primary.Addr)
	if err != nil {
		return fmt.Errorf("the primary's address %q: %w", primary.Addr, err)
	}
	pc, pdone, err := mysqlOpen(ctx, primary, "")
	if err != nil {
		return fmt.Errorf("connect to %s: %w", primary.Name, err)
	}
	defer pdone()
	var logBin, primaryID int
	if err := pc.QueryRowContext(ctx, "SELECT @@log_bin, @@server_id").Scan(&logBin, &primaryID); err != nil {
		return fmt.Errorf("read %s's binary log setting: %w", primary.Name, err)
	}
	if logBin != 1 {
		return fmt.Errorf("%s writes no binary log for %s to follow: the topology must declare log_bin on it", primary.Name, n.Name)
	}
	rc, rdone, err := mysqlOpen(ctx, n, "")
	if err != nil {
		return fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	defer rdone()
	var replicaID int
	if err := rc.QueryRowContext(ctx, "SELECT @@server_id").Scan(&replicaID); err != nil {
		return fmt.Errorf("read %s's server id: %w", n.Name, err)
	}
	if replicaID == primaryID {
		// A replica skips the events carrying its own server id: it would
		// run and follow nothing.
		return fmt.Errorf("%s and its primary %s have the same server_id %d: the topology must declare distinct ones", n.Name, primary.Name, primaryID)
	}
	// The lab's user may replicate (docker/mysql/init.sql grants it everything)
	// and needs no password.
	change := fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='%s', MASTER_PORT=%s, MASTER_USER='%s', MASTER_PASSWORD='', "+
		"MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos", host, port, MySQLUser)
	for _, stmt := range []string{change, "START SLAVE"} {
		if _, err := rc.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s on %s: %w", strings.Fields(stmt)[0]+" "+strings.Fields(stmt)[1], n.Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, followBound)
	defer cancel()
	for {
		st, ok, err := slaveStatus(ctx, rc)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("%s did not start following %s within %v", n.Name, primary.Name, followBound)
		case err != nil:
			return fmt.Errorf("SHOW SLAVE STATUS on %s: %w", n.Name, err)
		case !ok:
			return fmt.Errorf("%s shows no replication after START SLAVE", n.Name)
		case st["Last_IO_Error"] != "" || st["Last_SQL_Error"] != "":
			return fmt.Errorf("%s cannot follow %s: %s%s", n.Name, primary.Name, st["Last_IO_Error"], st["Last_SQL_Error"])
		case st["Slave_IO_Running"] == "Yes" && st["Slave_SQL_Running"] == "Yes":
			return waitSemisync(ctx, pc, primary, n)
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("%s did not start following %s within %v (IO thread %s, SQL thread %s)",
				n.Name, primary.Name, followBound, st["Slave_IO_Running"], st["Slave_SQL_Running"])
		}
	}
}

// waitSemisync returns once a semi-synchronous primary has its replica
// connected and semi-synchronous replication on (at once on an
// asynchronous one): before that, its commits return unacknowledged, and a
// run would start on what is in effect the asynchronous topology.
func waitSemisync(ctx context.Context, pc *sql.Conn, primary, replica *Node) error {
	var enabled int
	if err := pc.QueryRowContext(ctx, "SELECT @@rpl_semi_sync_master_enabled").Scan(&enabled); err != nil {
		return fmt.Errorf("read %s's semi-synchronous setting: %w", primary.Name, err)
	}
	if enabled == 0 {
		return nil
	}
	for {
		var clients int
		var status string
		err := pc.QueryRowContext(ctx, `SELECT
			(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS'),
			(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS')`).Scan(&clients, &status)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("%s did not turn semi-synchronous replication to %s on within %v", primary.Name, replica.Name, followBound)
		case err != nil:
			return fmt.Errorf("read %s's semi-synchronous status: %w", primary.Name, err)
		case clients > 0 && status == "ON":
			return nil
		}
		if err := pause(ctx); err != nil {
			return fmt.Errorf("%s did not turn semi-synchronous replication to %s on within %v (clients %d, status %s)",
				primary.Name, replica.Name, followBound, clients, status)
		}
	}
}

// pause waits a few milliseconds between a wait's looks.
func pause(ctx context.Context) error {
	select {
	case <-time.After(5 * time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slaveStatus reads SHOW SLAVE STATUS's one row by column name; ok is
// false when the server follows no primary.
func slaveStatus(ctx context.Context, c *sql.Conn) (map[string]string, bool, error) {
	rows, err := c.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, false, err
	}
	if !rows.Next() {
		return nil, false, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, false, err
	}
	out := make(map[string]string, len(cols))
	for i, c := range cols {
		out[c] = vals[i].String
	}
	return out, true, rows.Err()
}

// PromotedReplica is the replica the MySQL replica topologies declare.
func (mysqlKind) PromotedReplica() string { return topology.MySQLReplicaName }

// Promote makes a MySQL replica a primary that accepts writes, as an
// operator (or a fail-over tool) does: it stops the replica receiving,
// waits until it has applied all it had received (what a semi-synchronous
// primary was told is replicated may be in the relay log only, and RESET
// SLAVE deletes the relay log), then forgets the primary (RESET SLAVE ALL)
// and turns read_only off. pg_promote likewise replays all the WAL it has
// before it ends recovery.
func (mysqlKind) Promote(ctx context.Context, n *Node) error {
	c, done, err := mysqlOpen(ctx, n, "")
	if err != nil {
		return fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	defer done()
	if _, err := c.ExecContext(ctx, "STOP SLAVE IO_THREAD"); err != nil {
		return fmt.Errorf("STOP SLAVE IO_THREAD on %s: %w", n.Name, err)
	}
	st, ok, err := slaveStatus(ctx, c)
	if err != nil {
		return fmt.Errorf("SHOW SLAVE STATUS on %s: %w", n.Name, err)
	}
	if !ok {
		return fmt.Errorf("%s follows no primary: there is nothing to promote", n.Name)
	}
	received := st["Gtid_IO_Pos"]
	var waited int
	if err := c.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", received, followBound.Seconds()).Scan(&waited); err != nil {
		return fmt.Errorf("wait for %s to apply its relay log (to %s): %w", n.Name, received, err)
	}
	if waited != 0 {
		return fmt.Errorf("%s did not apply its relay log (to %s) within %v", n.Name, received, followBound)
	}
	for _, stmt := range []string{"STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF"} {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s on %s: %w", stmt, n.Name, err)
		}
	}
	return nil
}

// CatchUp waits, at most bound, until replica has applied every
// transaction primary had written to its binary log when it was called
// (its @@gtid_binlog_pos, which a commit has reached when it returns),
// and says how far that was. MASTER_GTID_WAIT waits on the replica's
// applied position (gtid_slave_pos) without polling.
func (mysqlKind) CatchUp(ctx context.Context, primary, replica *Node, bound time.Duration) (string, error) {
	start := time.Now()
	pc, pdone, err := mysqlOpen(ctx, primary, "")
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", primary.Name, err)
	}
	var want string
	err = pc.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&want)
	pdone()
	if err != nil {
		return "", fmt.Errorf("the binary log position on %s: %w", primary.Name, err)
	}
	rc, rdone, err := mysqlOpen(ctx, replica, "")
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", replica.Name, err)
	}
	defer rdone()
	if _, ok, err := slaveStatus(ctx, rc); err != nil {
		return "", fmt.Errorf("SHOW SLAVE STATUS on %s: %w", replica.Name, err)
	} else if !ok {
		// A promoted server follows no primary: waiting for it would
		// last the whole bound for nothing.
		return "", fmt.Errorf("%s is not a replica: it follows no primary", replica.Name)
	}
	var waited int
	if err := rc.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", want, bound.Seconds()).Scan(&waited); err != nil {
		return "", fmt.Errorf("wait for %s to apply %s's binary log to %s: %w", replica.Name, primary.Name, want, err)
	}
	var got string
	if err := rc.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&got); err != nil {
		return "", fmt.Errorf("the applied position on %s: %w", replica.Name, err)
	}
	if waited != 0 {
		return "", fmt.Errorf("%s applied %s's binary log to GTID %s, not to %s (its position when the wait began), within %v",
			replica.Name, primary.Name, orEmpty(got), orEmpty(want), bound)
	}
	return fmt.Sprintf("%s applied %s's binary log to GTID %s (at least %s, its position) in %v",
		replica.Name, primary.Name, orEmpty(got), orEmpty(want), time.Since(start).Round(time.Millisecond)), nil
}

func orEmpty(gtid string) string {
	if gtid == "" {
		return "(none)"
	}
	return gtid
}

var _ Promoter = mysqlKind{}
