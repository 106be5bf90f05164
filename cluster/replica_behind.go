package cluster

import (
	"context"
	"fmt"
)

// BehindReporter is a database kind that can say how far its replica is
// behind its primary, in the positions the server itself keeps, so a
// fault that holds replication back (nemesis's lagging promotion) records
// what the replica had when the primary died instead of assuming it.
type BehindReporter interface {
	// Behind reads primary's write position and replica's received and
	// applied positions, as one note for the history.
	Behind(ctx context.Context, primary, replica *Node) (string, error)
}

// Behind is BehindReporter.Behind for primary's kind, or an error saying
// the kind reports no positions.
func Behind(ctx context.Context, primary, replica *Node) (string, error) {
	k, err := KindOf(primary.Kind)
	if err != nil {
		return "", err
	}
	r, ok := k.(BehindReporter)
	if !ok {
		return "", fmt.Errorf("%s is a %s server, which reports no replication positions", primary.Name, primary.Kind)
	}
	return r.Behind(ctx, primary, replica)
}

// Behind: the primary's WAL insert position against what the replica has
// received (pg_last_wal_receive_lsn) and replayed, and the bytes between
// the first two. The insert position, not the write position: with
// synchronous_commit off a commit returns before its WAL is written, and
// the write position then stops short of the grant the fault is about.
func (postgresKind) Behind(ctx context.Context, primary, replica *Node) (string, error) {
	pc, err := controlConn(ctx, primary)
	if err != nil {
		return "", err
	}
	var wrote string
	err = pc.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&wrote)
	pc.Close(context.Background())
	if err != nil {
		return "", fmt.Errorf("the WAL position on %s: %w", primary.Name, err)
	}
	rc, err := controlConn(ctx, replica)
	if err != nil {
		return "", err
	}
	defer rc.Close(context.Background())
	var received, replayed *string
	var behind *int64
	if err := rc.QueryRow(ctx, "SELECT pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text, "+
		"pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_receive_lsn())::bigint", wrote).Scan(&received, &replayed, &behind); err != nil {
		return "", fmt.Errorf("the received WAL position on %s: %w", replica.Name, err)
	}
	b := "unknown"
	if behind != nil {
		b = fmt.Sprint(*behind)
	}
	return fmt.Sprintf("%s inserted WAL to %s; %s received %s, replayed %s: %s bytes behind",
		primary.Name, wrote, replica.Name, orNone(received), orNone(replayed), b), nil
}

// Behind: the primary's binary log position (@@gtid_binlog_pos) against
// what the replica's IO thread has received (Gtid_IO_Pos) and what it has
// applied (@@gtid_slave_pos).
func (mysqlKind) Behind(ctx context.Context, primary, replica *Node) (string, error) {
	pc, pdone, err := mysqlOpen(ctx, primary, "")
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", primary.Name, err)
	}
	var wrote string
	err = pc.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&wrote)
	pdone()
	if err != nil {
		return "", fmt.Errorf("the binary log position on %s: %w", primary.Name, err)
	}
	rc, rdone, err := mysqlOpen(ctx, replica, "")
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", replica.Name, err)
	}
	defer rdone()
	st, ok, err := slaveStatus(ctx, rc)
	if err != nil {
		return "", fmt.Errorf("SHOW SLAVE STATUS on %s: %w", replica.Name, err)
	}
	if !ok {
		return "", fmt.Errorf("%s is not a replica: it follows no primary", replica.Name)
	}
	var applied string
	if err := rc.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&applied); err != nil {
		return "", fmt.Errorf("the applied position on %s: %w", replica.Name, err)
	}
	return fmt.Sprintf("%s's binary log at GTID %s; %s received %s, applied %s",
		primary.Name, orEmpty(wrote), replica.Name, orEmpty(st["Gtid_IO_Pos"]), orEmpty(applied)), nil
}
