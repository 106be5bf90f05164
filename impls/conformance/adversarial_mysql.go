package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// mysqlServer is the suite's own view of a MySQL lock server: plain
// sessions apart from the lock's, that read back its rows and named locks
// and plant (or take away) what a lock never does itself.
type mysqlServer struct {
	db *sql.DB
}

func newMySQLServer(topo *cluster.Topology) *mysqlServer {
	dsn := topo.Endpoints().First(topology.MySQL)
	if dsn == "" {
		return nil
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		panic(fmt.Sprintf("conformance: the lab's own MySQL DSN %q: %v", dsn, err))
	}
	return &mysqlServer{db: db}
}

// relinkMySQL points a go-sql-driver DSN at a new link to its server.
func relinkMySQL(t *testing.T, dsn string) (string, *link) {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("parse MySQL DSN %q: %v", dsn, err)
	}
	l := newLink(t, cfg.Addr)
	cfg.Addr = l.addr()
	return cfg.FormatDSN(), l
}

// getLockName is the name mysql-get-lock takes for a fresh key (plain
// letters, digits and dashes, so used as it is, after the lab's prefix).
func getLockName(key string) string { return "locklab:" + key }

func (m *mysqlServer) conn(t *testing.T) (*sql.Conn, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	c, err := m.db.Conn(ctx)
	if err != nil {
		t.Fatalf("connect to MySQL: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ctx
}

// exec runs one statement on a session of the suite's own.
func (m *mysqlServer) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	c, ctx := m.conn(t)
	if _, err := c.ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// tables lists the lab's lock tables that have a row for key.
func (m *mysqlServer) tables(t *testing.T, key string) []string {
	t.Helper()
	c, ctx := m.conn(t)
	rows, err := c.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME = 'lock_key' AND TABLE_NAME LIKE 'locklab\_%'`)
	if err != nil {
		t.Fatalf("list lock tables: %v", err)
	}
	var all []string
	for rows.Next() {
		var tb string
		if err := rows.Scan(&tb); err != nil {
			t.Fatal(err)
		}
		all = append(all, tb)
	}
	rows.Close()
	var out []string
	for _, tb := range all {
		var n int
		if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+tb+"` WHERE lock_key = ?", key).Scan(&n); err != nil {
			t.Fatalf("rows of %s: %v", tb, err)
		}
		if n > 0 {
			out = append(out, tb)
		}
	}
	sort.Strings(out)
	return out
}

// nameHolder is the connection ID of the session holding key's GET_LOCK
// name, 0 when none does.
func (m *mysqlServer) nameHolder(t *testing.T, key string) int64 {
	t.Helper()
	c, ctx := m.conn(t)
	var id sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", getLockName(key)).Scan(&id); err != nil {
		t.Fatalf("IS_USED_LOCK: %v", err)
	}
	return id.Int64
}

// rowLocked says whether another transaction holds key's row in
// locklab_row_lock (a session of ours skips it when locked).
func (m *mysqlServer) rowLocked(t *testing.T, key string) bool {
	t.Helper()
	c, ctx := m.conn(t)
	if _, err := c.ExecContext(ctx, "START TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	defer c.ExecContext(ctx, "ROLLBACK")
	var got []byte
	err := c.QueryRowContext(ctx, "SELECT lock_key FROM locklab_row_lock WHERE lock_key = ? FOR UPDATE SKIP LOCKED", key).Scan(&got)
	if mysqlNoSuchTable(err) {
		return false // no row lock was ever taken on this server
	}
	if errors.Is(err, sql.ErrNoRows) {
		var exists int
		if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM locklab_row_lock WHERE lock_key = ?", key).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		return exists > 0
	}
	if err != nil {
		t.Fatalf("probe the row lock: %v", err)
	}
	return false
}

// killRowHolder ends the session whose transaction holds key's row. InnoDB
// names a row lock's holder only to a transaction waiting for it, so a
// session of ours waits for the row, and the waits table says who blocks it.
func (m *mysqlServer) killRowHolder(t *testing.T, key string) {
	t.Helper()
	if !m.rowLocked(t, key) {
		return
	}
	waiter, ctx := m.conn(t)
	var waiterID int64
	if err := waiter.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&waiterID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SET SESSION innodb_lock_wait_timeout = 5", "START TRANSACTION"} {
		if _, err := waiter.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan error, 1)
	go func() {
		var k []byte
		got <- waiter.QueryRowContext(ctx, "SELECT lock_key FROM locklab_row_lock WHERE lock_key = ? FOR UPDATE", key).Scan(&k)
	}()
	c, _ := m.conn(t)
	deadline := time.Now().Add(4 * time.Second)
	var holder int64
	for holder == 0 && time.Now().Before(deadline) {
		err := c.QueryRowContext(ctx, fmt.Sprintf(`SELECT b.trx_mysql_thread_id FROM information_schema.INNODB_LOCK_WAITS w
			JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
			JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
			WHERE r.trx_mysql_thread_id = %d`, waiterID)).Scan(&holder)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("find the row lock's holder: %v", err)
		}
		// InnoDB refreshes what these tables show only when they were not
		// read for 100ms: polling faster reads the same stale copy forever.
		time.Sleep(150 * time.Millisecond)
	}
	if holder == 0 {
		t.Fatalf("no holder of the row lock on %q found; transactions: %s", key, m.dump(t, "SELECT trx_id, trx_state, trx_mysql_thread_id, trx_query FROM information_schema.INNODB_TRX"))
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("KILL %d", holder)); err != nil {
		t.Fatalf("KILL the row lock's holder: %v", err)
	}
	// The waiter gets the row once the killed session's transaction is
	// rolled back: then the lock is surely gone, and ours is let go.
	if err := <-got; err != nil {
		t.Fatalf("the row after its holder was killed: %v", err)
	}
	if _, err := waiter.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// killNameHolder ends the session holding key's GET_LOCK name and waits
// until the server has freed it (KILL returns before the session is gone).
func (m *mysqlServer) killNameHolder(t *testing.T, key string) {
	t.Helper()
	id := m.nameHolder(t, key)
	if id == 0 {
		return
	}
	m.exec(t, fmt.Sprintf("KILL %d", id))
	for deadline := time.Now().Add(5 * time.Second); m.nameHolder(t, key) != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("GET_LOCK name of %q still held 5s after its session was killed", key)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// steal takes key from its holder behind its back, as an operator would:
// its rows in a lock table deleted, the sessions holding its named lock or
// its row lock killed.
func (m *mysqlServer) steal(t *testing.T, key string) {
	t.Helper()
	m.killNameHolder(t, key)
	m.killRowHolder(t, key)
	for _, tb := range m.tables(t, key) {
		if tb != "locklab_row_lock" { // the row is the lock's place, not the lock
			m.exec(t, "DELETE FROM `"+tb+"` WHERE lock_key = ?", key)
		}
	}
}

// checkShape reads back what a MySQL lock keeps while it holds key.
func (m *mysqlServer) checkShape(t *testing.T, want impls.Footprint, key string, tok uint64, fenced bool, within time.Duration) {
	t.Helper()
	var wantTables []string
	if want.MySQLTable != "" {
		wantTables = []string{want.MySQLTable}
	}
	if got := m.tables(t, key); fmt.Sprint(got) != fmt.Sprint(wantTables) {
		t.Errorf("rows for the key in %v, documented %v", got, wantTables)
	}
	if held := m.nameHolder(t, key) != 0; held != want.MySQLGetLock {
		t.Errorf("GET_LOCK name %q held: %v, documented %v", getLockName(key), held, want.MySQLGetLock)
	}
	if want.MySQLTable == "locklab_row_lock" && !m.rowLocked(t, key) {
		t.Errorf("the key's row in locklab_row_lock is not locked, documented held by the lease's transaction")
	}
	if want.MySQLVersionIsToken {
		c, ctx := m.conn(t)
		var version uint64
		var leftUS int64
		err := c.QueryRowContext(ctx, "SELECT version, TIMESTAMPDIFF(MICROSECOND, NOW(6), expires_at) FROM `"+
			want.MySQLTable+"` WHERE lock_key = ?", key).Scan(&version, &leftUS)
		if err != nil {
			t.Fatal(err)
		}
		if !fenced || version != tok {
			t.Errorf("the row's version is %d, the lease's token %d", version, tok)
		}
		if left := time.Duration(leftUS) * time.Microsecond; left <= 0 || left > within {
			t.Errorf("the row expires in %v, documented within the TTL (%v since the acquire was sent)", left, within)
		}
	}
}

// adversarialMySQL puts a MySQL lock's key in state other clients leave:
// a row of another owner, a row locked by another transaction, a named
// lock held by another session, the row of a row lock deleted.
func adversarialMySQL(t *testing.T, e *env) {
	m := e.srv.mysql
	probeKey := freshKey(t)
	lease := mustAcquire(t, e.newLocker(t), probeKey)
	tables := m.tables(t, probeKey)
	named := m.nameHolder(t, probeKey) != 0
	mustRelease(t, lease)
	occupied := func(t *testing.T, key string) {
		defect := refusal(t, e, key, false)
		if defect == "" {
			defect = waitsOut(t, e, key, false)
		}
		e.judge(t, DefectImmortalKeyGranted, defect)
	}
	if named {
		t.Run("NameHeldByAnotherSession", func(t *testing.T) {
			key := freshKey(t)
			c, ctx := m.conn(t)
			var got int
			if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", getLockName(key)).Scan(&got); err != nil || got != 1 {
				t.Fatalf("GET_LOCK from another session: %d, %v", got, err)
			}
			occupied(t, key)
		})
	}
	for _, tb := range tables {
		switch tb {
		case "locklab_lock_table":
			t.Run("RowOfAnotherOwner", func(t *testing.T) {
				key := freshKey(t)
				m.exec(t, "INSERT INTO locklab_lock_table (lock_key, owner) VALUES (?, 'foreign-owner')", key)
				e.judge(t, DefectImmortalKeyGranted, refusal(t, e, key, false))
			})
		case "locklab_optimistic_lock":
			t.Run("RowOfAnotherOwnerWithoutExpiry", func(t *testing.T) {
				key := freshKey(t)
				m.exec(t, `INSERT INTO locklab_optimistic_lock (lock_key, owner, version, expires_at)
					VALUES (?, 'foreign-owner', 7, '9999-12-31')`, key)
				occupied(t, key)
			})
			t.Run("FreeRowFromAnOlderDeployment", func(t *testing.T) {
				key := freshKey(t)
				m.exec(t, `INSERT INTO locklab_optimistic_lock (lock_key, owner, version, expires_at)
					VALUES (?, NULL, 41, '1970-01-01')`, key)
				lease := mustAcquire(t, e.newLocker(t), key)
				tok, _ := lease.Token()
				mustRelease(t, lease)
				if tok <= 41 {
					t.Errorf("a free row at version 41 was granted with token %d", tok)
				}
			})
			t.Run("VersionRowDeleted", func(t *testing.T) {
				key := freshKey(t)
				l := e.newLocker(t)
				var last uint64
				for range 3 {
					lease := mustAcquire(t, l, key)
					last, _ = lease.Token()
					mustRelease(t, lease)
				}
				m.exec(t, "DELETE FROM locklab_optimistic_lock WHERE lock_key = ?", key)
				lease := mustAcquire(t, l, key)
				next, _ := lease.Token()
				mustRelease(t, lease)
				var defect string
				if next <= last {
					defect = fmt.Sprintf("the grant after the row was deleted got token %d, after %d", next, last)
				}
				e.judge(t, DefectTokensGoBack, defect)
			})
		case "locklab_row_lock":
			t.Run("RowLockedByAnotherTransaction", func(t *testing.T) {
				key := freshKey(t)
				m.exec(t, "INSERT INTO locklab_row_lock (lock_key) VALUES (?)", key)
				c, ctx := m.conn(t)
				for _, q := range []string{"START TRANSACTION", "SELECT lock_key FROM locklab_row_lock WHERE lock_key = '" + key + "' FOR UPDATE"} {
					if _, err := c.ExecContext(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				occupied(t, key)
			})
			t.Run("RowDeletedWhileFree", func(t *testing.T) {
				key := freshKey(t)
				l := e.newLocker(t)
				mustRelease(t, mustAcquire(t, l, key))
				m.exec(t, "DELETE FROM locklab_row_lock WHERE lock_key = ?", key)
				mustRelease(t, mustAcquire(t, l, key))
			})
		}
	}
}

// mysqlNoSuchTable: ER_NO_SUCH_TABLE.
func mysqlNoSuchTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1146
}

// dump renders a query's rows for a failure message.
func (m *mysqlServer) dump(t *testing.T, q string) string {
	t.Helper()
	c, ctx := m.conn(t)
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err.Error()
		}
		out += fmt.Sprint(vals) + "; "
	}
	return out
}
