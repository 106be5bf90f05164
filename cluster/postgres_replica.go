package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/topology"
)

// baseBackup makes data a copy of opts.ReplicaOf's data dir, taken over
// the replication protocol while the primary runs (pg_basebackup), with
// the WAL it needs streamed alongside and, by -R, standby.signal and the
// primary_conninfo a replica starts from. It runs on the replica's host,
// as the server's user.
func baseBackup(bin, data string, opts PostgresOptions, asServerUser func(*exec.Cmd)) error {
	host, port, err := splitHostPort(opts.ReplicaOf.Addr)
	if err != nil {
		return fmt.Errorf("the primary's address %q: %w", opts.ReplicaOf.Addr, err)
	}
	tool := filepath.Join(bin, "pg_basebackup")
	if !isExecutable(tool) {
		// bin may be a dir of links to the server's programs only
		// (postgres, initdb); Debian puts every client tool on PATH.
		if tool, err = exec.LookPath("pg_basebackup"); err != nil {
			return missing("pg_basebackup", "postgresql")
		}
	}
	cmd := exec.Command(tool, "-h", host, "-p", port, "-U", PostgresUser,
		"-D", data, "-R", "-X", "stream", "--no-sync", "--checkpoint=fast")
	asServerUser(cmd)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := cmd.Start
	if opts.Host != nil {
		start = func() error { return opts.Host.Start(cmd) }
	}
	if err := start(); err != nil {
		return fmt.Errorf("pg_basebackup from %s: %w", opts.ReplicaOf.Name, err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("pg_basebackup from %s: %w\n%s", opts.ReplicaOf.Name, err, out.Bytes())
	}
	return nil
}

// PromotedReplica is the replica pg-replica-async and pg-replica-sync
// declare.
func (postgresKind) PromotedReplica() string { return topology.PGReplicaName }

// Promote ends a PostgreSQL replica's recovery and makes it a primary that
// accepts writes (pg_promote, waiting until it has), through the lab's
// control path to it.
func (postgresKind) Promote(ctx context.Context, n *Node) error {
	conn, err := controlConn(ctx, n)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var done bool
	if err := conn.QueryRow(ctx, "SELECT pg_promote(true, $1)", int((30 * time.Second).Seconds())).Scan(&done); err != nil {
		return fmt.Errorf("pg_promote on %s: %w", n.Name, err)
	}
	if !done {
		return fmt.Errorf("pg_promote on %s: not promoted within 30s", n.Name)
	}
	return nil
}

// CatchUp waits, at most bound, until replica has replayed every WAL
// record primary had when it was called, and says how far that was. The
// target is the primary's flush position right after a commit of its own
// that it flushed (synchronous_commit local, which waits for no standby),
// not its insert or write
// position: a primary with synchronous_commit off, as the lab runs it,
// returns a commit before the record leaves the WAL buffers, so the write
// position may not cover it yet; and the insert position, right after a
// WAL segment or page starts (as a base backup leaves it), lies past that
// page's header, which no replayed record ends at: the wait then lasted
// until the next record (14.5 s in a run, a background snapshot). A flush
// position is where a record ends, as the replica's replay position is.
func (postgresKind) CatchUp(ctx context.Context, primary, replica *Node, bound time.Duration) (string, error) {
	start := time.Now()
	pc, err := controlConn(ctx, primary)
	if err != nil {
		return "", err
	}
	var want string
	_, err = pc.Exec(ctx, "SET synchronous_commit = local")
	if err == nil {
		// A transaction that writes WAL of its own (a logical message,
		// which nothing decodes here), so its commit is flushed before
		// the reply, with all WAL before it. A bare txid_current()
		// writes nothing before its commit record, and PostgreSQL
		// commits such a transaction asynchronously whatever the
		// setting: the flush position stayed short of it.
		_, err = pc.Exec(ctx, "SELECT pg_logical_emit_message(true, 'locklab', 'settle')")
	}
	if err == nil {
		err = pc.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&want)
	}
	pc.Close(context.Background())
	if err != nil {
		return "", fmt.Errorf("the WAL position on %s: %w", primary.Name, err)
	}
	rc, err := controlConn(ctx, replica)
	if err != nil {
		return "", err
	}
	defer rc.Close(context.Background())
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var got *string
	for {
		var recovering bool
		var done *bool
		err := rc.QueryRow(ctx, "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, pg_last_wal_replay_lsn() >= $1::pg_lsn",
			want).Scan(&recovering, &got, &done)
		switch {
		case err != nil && ctx.Err() != nil:
			return "", fmt.Errorf("%s replayed WAL to %s, not to %s (%s's flushed WAL when the wait began), within %v",
				replica.Name, orNone(got), want, primary.Name, bound)
		case err != nil:
			return "", fmt.Errorf("the replayed WAL position on %s: %w", replica.Name, err)
		case !recovering || done == nil:
			// A promoted server's replay position stays where its
			// recovery ended: it follows no primary any more.
			return "", fmt.Errorf("%s is not a replica: it replays no WAL", replica.Name)
		case *done:
			return fmt.Sprintf("%s replayed %s's WAL to %s (at least %s, its flush position) in %v",
				replica.Name, primary.Name, *got, want, time.Since(start).Round(time.Millisecond)), nil
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

func orNone(lsn *string) string {
	if lsn == nil {
		return "nothing"
	}
	return *lsn
}

// controlConn connects to n through the lab's control path to it (its
// host's network when it has one).
func controlConn(ctx context.Context, n *Node) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(n.DSN())
	if err != nil {
		return nil, err
	}
	if dial := n.dialer(); dial != nil {
		cfg.DialFunc = dial
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	return conn, nil
}

// Promoter is a server kind whose replica the lab can promote to take its
// primary's place.
type Promoter interface {
	// PromotedReplica is the node name the topologies that declare the
	// kind's replica give it (topology.PGReplicaName, ...).
	PromotedReplica() string
	Promote(ctx context.Context, n *Node) error
	// CatchUp waits, at most bound, until replica has replayed all that
	// primary had written when it was called, and returns a note saying
	// how far: a fail-over then loses only what was written after it.
	CatchUp(ctx context.Context, primary, replica *Node, bound time.Duration) (string, error)
}
