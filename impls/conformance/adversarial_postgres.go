package conformance

import (
	"fmt"
	"testing"
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
