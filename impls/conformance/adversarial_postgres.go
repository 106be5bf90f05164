package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// adversarialPostgres leaves a PostgreSQL lock's rows as other owners and
// older deployments do: held rows with and without an expiry, a free row
// of an older schema, a deleted version row.
func adversarialPostgres(t *testing.T, e *env) {
	probeKey := freshKey(t)
	lease := mustAcquire(t, e.newLocker(t), probeKey)
	tables := e.srv.pgTables(t, probeKey)
	mustRelease(t, lease)
	for _, tb := range tables {
		switch tb {
		case "locklab_unique_lock":
			t.Run("RowOfAnotherOwner", func(t *testing.T) {
				key := freshKey(t)
				e.srv.pg(t, "INSERT INTO locklab_unique_lock (key, owner) VALUES ($1, 'foreign-owner')", key)
				defect := refusal(t, e, key, false)
				e.judge(t, DefectImmortalKeyGranted, defect)
			})
		case "locklab_row_lock":
			t.Run("RowLockedByAnotherTransaction", func(t *testing.T) {
				key := freshKey(t)
				e.srv.pg(t, "INSERT INTO locklab_row_lock (key) VALUES ($1)", key)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				c, err := pgx.Connect(ctx, e.srv.pgDSN)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close(context.Background())
				for _, q := range []string{"BEGIN", "SELECT key FROM locklab_row_lock WHERE key = '" + key + "' FOR UPDATE"} {
					if _, err := c.Exec(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				defect := refusal(t, e, key, false)
				if defect == "" {
					defect = waitsOut(t, e, key, false)
				}
				e.judge(t, DefectImmortalKeyGranted, defect)
			})
			t.Run("RowDeletedWhileFree", func(t *testing.T) {
				key := freshKey(t)
				l := e.newLocker(t)
				mustRelease(t, mustAcquire(t, l, key))
				e.srv.pg(t, "DELETE FROM locklab_row_lock WHERE key = $1", key)
				mustRelease(t, mustAcquire(t, l, key))
			})
		case "locklab_optimistic_lock":
			t.Run("RowOfAnotherOwnerWithoutExpiry", func(t *testing.T) {
				key := freshKey(t)
				e.srv.pg(t, `INSERT INTO locklab_optimistic_lock (key, owner, version, expires_at)
					VALUES ($1, 'foreign-owner', 7, 'infinity')`, key)
				defect := refusal(t, e, key, false)
				if defect == "" {
					defect = waitsOut(t, e, key, false)
				}
				e.judge(t, DefectImmortalKeyGranted, defect)
			})
			t.Run("FreeRowFromAnOlderDeployment", func(t *testing.T) {
				key := freshKey(t)
				e.srv.pg(t, `INSERT INTO locklab_optimistic_lock (key, owner, version, expires_at)
					VALUES ($1, NULL, 41, '-infinity')`, key)
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
				for i := 0; i < 3; i++ {
					lease := mustAcquire(t, l, key)
					last, _ = lease.Token()
					mustRelease(t, lease)
				}
				e.srv.pg(t, "DELETE FROM locklab_optimistic_lock WHERE key = $1", key)
				lease := mustAcquire(t, l, key)
				next, _ := lease.Token()
				mustRelease(t, lease)
				var defect string
				if next <= last {
					defect = fmt.Sprintf("the grant after the row was deleted got token %d, after %d", next, last)
				}
				e.judge(t, DefectTokensGoBack, defect)
			})
		}
	}
}
