package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/impls"
)

// adversarialZooKeeper shares a ZooKeeper lock's directory with what
// production puts there: contenders of another library, stray children,
// and a directory made ephemeral by someone else.
func adversarialZooKeeper(t *testing.T, e *env) {
	probeKey := freshKey(t)
	dirOf := func(key string) string {
		return strings.ReplaceAll(e.srv.zkLockDir(t, e.newLocker(t), probeKey), probeKey, key)
	}
	zc := e.srv.zk
	ensureDir := func(t *testing.T, dir string) {
		t.Helper()
		_, err := zc.Create(dir, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", dir, err)
		}
	}

	// Contenders of other libraries, queued ahead of ours: Apache Curator's
	// InterProcessMutex names its node _c_<uuid>-lock-<seq>, go-zookeeper's
	// zk.Lock _c_<32 hex>-lock-<seq>, kazoo <uuid hex>__lock__<seq>.
	for _, c := range []struct{ name, prefix string }{
		{"Curator", "_c_6f1f3b1e-9a51-4c0e-b1c4-0d2c6f0e9a11-lock-"},
		{"GoZookeeper", "_c_" + strings.Repeat("ab", 16) + "-lock-"},
		{"Kazoo", strings.Repeat("cd", 16) + "__lock__"},
	} {
		t.Run("ForeignContender"+c.name, func(t *testing.T) {
			key := freshKey(t)
			dir := dirOf(key)
			ensureDir(t, dir)
			node, err := zc.Create(dir+"/"+c.prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Fatalf("create the foreign contender: %v", err)
			}
			defect := refusal(t, e, key, false)
			if defect != "" {
				zc.Delete(node, -1)
				e.judge(t, ForeignContender(c.name), defect)
				return
			}
			// The foreign holder leaves: a waiter must be granted, woken
			// by its watch.
			got := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), e.recoveryBound())
				defer cancel()
				lease, err := e.newLocker(t).Acquire(ctx, key)
				if err == nil {
					err = lease.Release(context.Background())
				}
				got <- err
			}()
			time.Sleep(e.o.TTL / 2)
			if err := zc.Delete(node, -1); err != nil {
				t.Fatalf("delete the foreign contender: %v", err)
			}
			if err := <-got; err != nil {
				defect = fmt.Sprintf("after the foreign contender left, the waiter got %v", err)
			}
			e.judge(t, ForeignContender(c.name), defect)
		})
	}

	// Not contenders: a node someone left for notes, and one of another
	// recipe's non-sequential names. The lock must neither wait for them nor
	// trip over them.
	t.Run("StrayChildren", func(t *testing.T) {
		key := freshKey(t)
		dir := dirOf(key)
		ensureDir(t, dir)
		for _, name := range []string{"README", "leases"} {
			if _, err := zc.Create(dir+"/"+name, []byte("not a contender"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
		var defect string
		ctx := context.Background()
		a, b := e.newLocker(t), e.newLocker(t)
		lease, err := a.TryAcquire(ctx, key)
		if err != nil {
			defect = fmt.Sprintf("a free lock whose directory holds stray children: %v", err)
		} else {
			if _, err := b.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
				defect = fmt.Sprintf("while held, another client got %v, want ErrHeld", err)
			}
			if err := lease.Release(ctx); err != nil && defect == "" {
				defect = fmt.Sprintf("release: %v", err)
			}
		}
		e.judge(t, DefectStrayChild, defect)
	})

	// The lock's directory is an ephemeral node (another session made it,
	// by mistake): it can have no children, so no grant is possible.
	t.Run("LockDirIsEphemeral", func(t *testing.T) {
		key := freshKey(t)
		dir := dirOf(key)
		if _, err := zc.Create(dir, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s ephemeral: %v", dir, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.recoveryBound())
		defer cancel()
		var defect string
		lease, err := e.newLocker(t).TryAcquire(ctx, key)
		switch {
		case err == nil:
			lease.Release(ctx)
			defect = "granted a lock whose directory cannot hold a contender"
		case errors.Is(err, context.DeadlineExceeded):
			defect = "TryAcquire hung until its context ended"
		case !errors.Is(err, impls.ErrBackend):
			defect = fmt.Sprintf("TryAcquire: %v, want a backend error", err)
		}
		e.judge(t, DefectEphemeralDirAccepted, defect)
	})
}
