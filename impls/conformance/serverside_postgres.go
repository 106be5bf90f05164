package conformance

// The suite's reads of a PostgreSQL lock server, each on a connection
// of its own: statements, counts, the lock tables that have a row for a
// key, and ending the session whose transaction holds a key's row.

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pg runs one statement on a connection of the suite's own.
func (s *server) pg(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// pgTables lists the lab's lock tables that have a row for key.
func (s *server) pgTables(t *testing.T, key string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = 'public' AND column_name = 'key' AND table_name LIKE 'locklab_%'`)
	if err != nil {
		t.Fatalf("list lock tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("list lock tables: %v", err)
	}
	var out []string
	for _, tb := range tables {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{tb}.Sanitize()+" WHERE key = $1", key).Scan(&n); err != nil {
			t.Fatalf("rows of %s: %v", tb, err)
		}
		if n > 0 {
			out = append(out, tb)
		}
	}
	return out
}

// pgCount runs a count query on a connection of the suite's own.
func (s *server) pgCount(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// pgEndRowHolder ends the session whose transaction holds key's row in
// locklab_row_lock, if one does. PostgreSQL names a row lock's holder only
// to a transaction waiting for it, so a session of ours waits for the row
// and pg_blocking_pids says who blocks it.
func (s *server) pgEndRowHolder(t *testing.T, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	waiter, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer waiter.Close(context.Background())
	var exists bool
	if err := waiter.QueryRow(ctx, "SELECT to_regclass('locklab_row_lock') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return
	}
	var pid int32
	if err := waiter.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT key FROM locklab_row_lock WHERE key = $1 FOR UPDATE", key)
		got <- err
	}()
	deadline := time.Now().Add(2 * time.Second)
	for {
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("probe the row lock: %v", err)
			}
			return // nobody held it
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiter on %q's row neither got it nor named its holder", key)
		}
		ended := s.pg(t, `SELECT pg_terminate_backend(b, 5000) FROM unnest(pg_blocking_pids($1)) AS b`, pid)
		if ended > 0 {
			if err := <-got; err != nil {
				t.Fatalf("the row after its holder's session ended: %v", err)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
