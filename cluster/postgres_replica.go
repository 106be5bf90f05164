package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
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

// Promote ends a PostgreSQL replica's recovery and makes it a primary that
// accepts writes (pg_promote, waiting until it has), through the lab's
// control path to it.
func (postgresKind) Promote(ctx context.Context, n *Node) error {
	cfg, err := pgx.ParseConfig(n.DSN())
	if err != nil {
		return err
	}
	if dial := n.dialer(); dial != nil {
		cfg.DialFunc = dial
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", n.Name, err)
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

// Promoter is a server kind whose replica the lab can promote to take its
// primary's place.
type Promoter interface {
	Promote(ctx context.Context, n *Node) error
}
