package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PrimaryWriteProbe asks one database server (PostgreSQL, MySQL), from the
// lab's vantage point (which no network fault cuts), to commit a write of
// its own: the server's answer, not a client's, says whether a primary
// cut off its replica still commits. A primary that waits for its replica
// (PostgreSQL's synchronous standby, MariaDB's semi-synchronous
// acknowledgement) does not answer a commit while the replica is cut off;
// an asynchronous one answers at once; a server in recovery or read-only
// refuses it.
//
// The write is an upsert of one row of ProbeTable, which the probe makes
// when it opens (so open it while the server can still commit): no lock's
// table, and one row however many writes.
type PrimaryWriteProbe struct {
	name  string
	write func(ctx context.Context, n int) error
	close func()
	n     int
}

// ProbeTable is the table a PrimaryWriteProbe writes.
const ProbeTable = "locklab_write_probe"

// primaryProber is a server kind whose primary the lab probes with
// commits.
type primaryProber interface {
	openPrimaryProbe(ctx context.Context, n *Node) (*PrimaryWriteProbe, error)
}

// ProbePrimaryWrites opens a probe on n, a database server, and makes its
// table.
func ProbePrimaryWrites(ctx context.Context, n *Node) (*PrimaryWriteProbe, error) {
	k, err := KindOf(n.Kind)
	if err != nil {
		return nil, err
	}
	p, ok := k.(primaryProber)
	if !ok {
		return nil, fmt.Errorf("%s is a %s server, which the lab does not probe with commits", n.Name, n.Kind)
	}
	return p.openPrimaryProbe(ctx, n)
}

// Write commits one write. refused is the server's own error reply (a
// server in recovery, a read-only one); err is set when no answer came
// (ctx ended while the commit waited, a lost connection). A commit that
// waits for a replica returns only when it is acknowledged or ctx ends:
// the caller decides how long an unanswered commit may wait.
func (p *PrimaryWriteProbe) Write(ctx context.Context) (refused string, err error) {
	p.n++
	err = p.write(ctx, p.n)
	if err == nil {
		return "", nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code + " " + pgErr.Message, nil
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return fmt.Sprintf("%d %s", myErr.Number, myErr.Message), nil
	}
	return "", fmt.Errorf("probe commit on %s: %w", p.name, err)
}

// Close closes the probe's connection; a commit still waiting on it is
// left to the server.
func (p *PrimaryWriteProbe) Close() error {
	p.close()
	return nil
}

func (postgresKind) openPrimaryProbe(ctx context.Context, n *Node) (*PrimaryWriteProbe, error) {
	c, err := controlConn(ctx, n)
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+ProbeTable+" (id int PRIMARY KEY, n bigint NOT NULL)"); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("make %s on %s: %w", ProbeTable, n.Name, err)
	}
	// pgx cuts the socket when a statement's context ends, which leaves
	// the connection closed: a later write dials again.
	conn := c
	write := func(ctx context.Context, v int) error {
		if conn == nil || conn.IsClosed() {
			if conn, err = controlConn(ctx, n); err != nil {
				conn = nil
				return err
			}
		}
		_, err := conn.Exec(ctx, "INSERT INTO "+ProbeTable+" VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", v)
		return err
	}
	return &PrimaryWriteProbe{name: n.Name, write: write, close: func() {
		if conn != nil {
			closePG(conn)
		}
	}}, nil
}

// closePG closes c without waiting on a server that does not answer.
func closePG(c *pgx.Conn) {
	if c.IsClosed() {
		return
	}
	c.PgConn().Conn().Close()
}

func (mysqlKind) openPrimaryProbe(ctx context.Context, n *Node) (*PrimaryWriteProbe, error) {
	c, done, err := mysqlOpen(ctx, n, MySQLDatabase)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	if _, err := c.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+ProbeTable+" (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB"); err != nil {
		done()
		return nil, fmt.Errorf("make %s on %s: %w", ProbeTable, n.Name, err)
	}
	conn, closeConn := c, done
	write := func(ctx context.Context, v int) error {
		if conn == nil {
			if conn, closeConn, err = mysqlOpen(ctx, n, MySQLDatabase); err != nil {
				conn = nil
				return err
			}
		}
		_, err := conn.ExecContext(ctx, "INSERT INTO "+ProbeTable+" VALUES (1, ?) ON DUPLICATE KEY UPDATE n = VALUES(n)", v)
		var reply *mysql.MySQLError
		if err != nil && !errors.As(err, &reply) {
			// The driver ends a connection whose statement's context
			// ended: the next write dials again.
			closeConn()
			conn = nil
		}
		return err
	}
	return &PrimaryWriteProbe{name: n.Name, write: write, close: func() {
		if conn != nil {
			closeConn()
		}
	}}, nil
}
