package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// The adversarial suite puts each lock in state it never creates itself but
// production has: its key written by hand or by an older deployment, with
// no expiry or of another type; its fencing counter gone, reset or garbled;
// its ZooKeeper directory shared with clients of another library; key names
// a careless encoding would confuse; and the races around expiry, loss,
// cancellation and Close. Two holders at once is always a defect; an
// occupied lock is held (never granted); a garbled backend state is a clear
// backend error (never a grant). A peer's defect is recorded in its
// Options.KnownDefects, and the suite then asserts it still shows.

// Defect names, the keys of Options.KnownDefects.
const (
	DefectImmortalKeyGranted   = "immortal-key-granted"
	DefectWrongTypeGranted     = "wrong-type-granted"
	DefectGarbledCounter       = "garbled-counter"
	DefectTokensGoBack         = "tokens-go-back-after-counter-reset"
	DefectForeignContender     = "foreign-contender-ignored"
	DefectStrayChild           = "stray-child"
	DefectKeyRejected          = "key-rejected"
	DefectKeysCollide          = "keys-collide"
	DefectRefreshAfterLoss     = "refresh-after-loss"
	DefectCancelledAcquire     = "cancelled-acquire"
	DefectCloseDuringAcquire   = "close-during-acquire"
	DefectEphemeralDirAccepted = "ephemeral-lock-dir"
	DefectStaleReleaseFrees    = "stale-release-frees"
)

// CounterResetLimitation is the recorded limitation of every lock whose
// fencing counter is ordinary data on the lock server (a Redis key, a table
// row): deleted, flushed or restored from an old backup, it starts again
// from what is left, and the next tokens go back. No client of that server
// alone can tell; the server-restart scenario's fenced verdict is the same
// hazard. ZooKeeper's czxid cannot be reset.
var CounterResetLimitation = map[string]string{
	DefectTokensGoBack: "the fencing counter is ordinary data on the lock server; reset, its tokens go back",
}

// judge compares what a check saw (defect, "" when none) with the lock's
// recorded defects: an unrecorded defect fails the test, and so does a
// recorded one that no longer shows, so the record stays true.
func (e *env) judge(t *testing.T, name, defect string) {
	t.Helper()
	recorded, known := e.o.KnownDefects[name]
	switch {
	case defect != "" && !known:
		t.Errorf("%s: defect %s: %s", e.spec.Name, name, defect)
	case defect == "" && known:
		t.Errorf("%s: recorded defect %s (%s) no longer shows: remove it from the lock's Options", e.spec.Name, name, recorded)
	case defect != "":
		t.Logf("recorded defect %s (%s) still shows: %s", name, recorded, defect)
	}
}

func runAdversarial(t *testing.T, e *env) {
	if len(e.topo.RedisAddrs) > 0 {
		t.Run("AdversarialRedis", func(t *testing.T) { adversarialRedis(t, e) })
	}
	if len(e.topo.ZooKeeperAddr) > 0 {
		t.Run("AdversarialZooKeeper", func(t *testing.T) { adversarialZooKeeper(t, e) })
	}
	if e.topo.PostgresDSN != "" {
		t.Run("AdversarialPostgres", func(t *testing.T) { adversarialPostgres(t, e) })
	}
	t.Run("AdversarialKeyNames", func(t *testing.T) { adversarialKeyNames(t, e) })
	t.Run("AdversarialRaces", func(t *testing.T) { adversarialRaces(t, e) })
}

// refusal checks that a TryAcquire on an occupied lock was not granted and
// how; a grant is released after a second client has tried the same key,
// so the message can say whether two clients held it at once.
func refusal(t *testing.T, e *env, key string, allowBackend bool) string {
	t.Helper()
	ctx := context.Background()
	lease, err := e.newLocker(t).TryAcquire(ctx, key)
	if err == nil {
		tok, _ := lease.Token()
		defer lease.Release(ctx)
		second, err2 := e.newLocker(t).TryAcquire(ctx, key)
		if err2 == nil {
			tok2, _ := second.Token()
			defer second.Release(ctx)
			return fmt.Sprintf("granted an occupied lock, and to a second client at the same time (tokens %d and %d)", tok, tok2)
		}
		return fmt.Sprintf("granted an occupied lock (token %d)", tok)
	}
	if errors.Is(err, impls.ErrHeld) || (allowBackend && errors.Is(err, impls.ErrBackend)) {
		return ""
	}
	t.Fatalf("TryAcquire of an occupied lock: %v", err)
	return ""
}

// waitsOut checks that a blocking Acquire on an occupied lock waits until
// its context ends (or, with allowBackend, fails with a backend error).
func waitsOut(t *testing.T, e *env, key string, allowBackend bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.o.TTL)
	defer cancel()
	lease, err := e.newLocker(t).Acquire(ctx, key)
	if err == nil {
		lease.Release(context.Background())
		return "a blocking Acquire was granted an occupied lock"
	}
	// An attempt on the wire when the deadline came is an unknown outcome,
	// honestly reported: still no lease.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, impls.ErrUnknown) ||
		(allowBackend && errors.Is(err, impls.ErrBackend)) {
		return ""
	}
	t.Fatalf("blocking Acquire of an occupied lock: %v", err)
	return ""
}

func adversarialRedis(t *testing.T, e *env) {
	ctx := context.Background()
	f := e.srv.redisFootprint(t, e.newLocker(t), freshKey(t))

	plant := func(t *testing.T, key string, k redisKey, typ string) {
		t.Helper()
		rdb := e.srv.redis[k.node]
		name := f.rename(k, key)
		var err error
		switch typ {
		case "string":
			err = rdb.Set(ctx, name, "foreign-owner", 0).Err()
		case "hash":
			err = rdb.HSet(ctx, name, "foreign-owner:1", 1).Err()
		default:
			t.Fatalf("no way to plant a %s at %q", typ, name)
		}
		if err != nil {
			t.Fatalf("plant %s at %q: %v", typ, name, err)
		}
	}
	other := map[string]string{"string": "hash", "hash": "string"}
	intact := func(t *testing.T, key string, typ string) {
		t.Helper()
		for _, k := range f.lock {
			name := f.rename(k, key)
			got, err := e.srv.redis[k.node].Type(ctx, name).Result()
			if err != nil {
				t.Fatalf("TYPE %q: %v", name, err)
			}
			if got != typ {
				t.Errorf("the planted %s at %q is now a %s: the lock overwrote or deleted a key it did not own", typ, name, got)
			}
		}
	}

	// The known bug's state: the lock key exists without an expiry (SET by
	// hand, or left by a client that crashed between SETNX and EXPIRE).
	t.Run("LockKeyWithoutExpiry", func(t *testing.T) {
		key := freshKey(t)
		for _, k := range f.lock {
			plant(t, key, k, k.typ)
		}
		// A value the lock cannot read (redis-getset's timestamp) may be a
		// backend error; anything but a grant is safe.
		defect := refusal(t, e, key, true)
		if defect == "" {
			defect = waitsOut(t, e, key, true)
		}
		e.judge(t, DefectImmortalKeyGranted, defect)
		intact(t, key, f.lock[0].typ)
	})

	t.Run("LockKeyOfAnotherType", func(t *testing.T) {
		key := freshKey(t)
		for _, k := range f.lock {
			plant(t, key, k, other[k.typ])
		}
		defect := refusal(t, e, key, true)
		if defect == "" {
			defect = waitsOut(t, e, key, true)
		}
		e.judge(t, DefectWrongTypeGranted, defect)
		intact(t, key, other[f.lock[0].typ])
	})

	if len(f.counter) == 0 {
		return
	}
	// The fencing counter, garbled: the grant must fail as a backend error
	// and leave nothing held, so the lock is free once the counter is fixed.
	for _, garble := range []struct{ name, value string }{
		{"FenceCounterNotANumber", "not-a-number"},
		{"FenceCounterNegative", "-5"},
	} {
		t.Run(garble.name, func(t *testing.T) {
			key := freshKey(t)
			for _, k := range f.counter {
				if err := e.srv.redis[k.node].Set(ctx, f.rename(k, key), garble.value, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			var defect string
			lease, err := e.newLocker(t).TryAcquire(ctx, key)
			switch {
			case err == nil:
				tok, ok := lease.Token()
				lease.Release(ctx)
				if ok {
					defect = fmt.Sprintf("granted with a counter of %q: token %d", garble.value, tok)
				}
			case !errors.Is(err, impls.ErrBackend):
				defect = fmt.Sprintf("with a counter of %q: %v, want a backend error", garble.value, err)
			}
			for _, k := range f.counter {
				if err := e.srv.redis[k.node].Del(ctx, f.rename(k, key)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if l2, err := e.newLocker(t).TryAcquire(ctx, key); err != nil {
				if defect == "" {
					defect = fmt.Sprintf("after a failed grant and the counter repaired, the lock is not free: %v", err)
				}
			} else {
				mustRelease(t, l2)
			}
			e.judge(t, DefectGarbledCounter, defect)
		})
	}

	// A counter deleted (FLUSHDB, an eviction policy, a hand-made DEL) or
	// restored from an old backup: the next token.
	for _, reset := range []struct {
		name  string
		apply func(rdb *redis.Client, name string, last uint64) error
	}{
		{"FenceCounterDeleted", func(rdb *redis.Client, name string, _ uint64) error { return rdb.Del(ctx, name).Err() }},
		{"FenceCounterBehind", func(rdb *redis.Client, name string, last uint64) error {
			return rdb.Set(ctx, name, last-2, 0).Err()
		}},
	} {
		t.Run(reset.name, func(t *testing.T) {
			key := freshKey(t)
			l := e.newLocker(t)
			var last uint64
			for i := 0; i < 3; i++ {
				lease := mustAcquire(t, l, key)
				last, _ = lease.Token()
				mustRelease(t, lease)
			}
			for _, k := range f.counter {
				if err := reset.apply(e.srv.redis[k.node], f.rename(k, key), last); err != nil {
					t.Fatal(err)
				}
			}
			lease := mustAcquire(t, l, key)
			next, _ := lease.Token()
			mustRelease(t, lease)
			var defect string
			if next <= last {
				defect = fmt.Sprintf("the grant after the counter was reset got token %d, after %d: a fenced resource that has seen %d refuses the new holder, and one that restarted accepts the old one", next, last, last)
			}
			e.judge(t, DefectTokensGoBack, defect)
		})
	}
}

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
				e.judge(t, DefectForeignContender, defect)
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
			e.judge(t, DefectForeignContender, defect)
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

// oddKeys are names a careless encoding breaks or confuses; partners are
// names that must stay distinct locks from them.
func oddKeys(t *testing.T) (keys, partners []string) {
	p := freshKey(t)
	var b [2048]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	keys = []string{
		p + " with spaces ",
		p + "/a/b",
		p + "%2Fa%b",
		p + "{tag}",
		p + "}{",
		p + ":fence",
		p + "-" + hex.EncodeToString(b[:]), // 4 KB, not compressible by much
		".",
		"..",
	}
	partners = []string{p + "%2Fa%2Fb", p + "/a%b", p + "+with+spaces+", p, p + "{tag}:fence", "%2E%2E"}
	return keys, partners
}

func adversarialKeyNames(t *testing.T, e *env) {
	ctx := context.Background()
	keys, partners := oddKeys(t)
	a, b := e.newLocker(t), e.newLocker(t)
	var rejected, collide []string
	var held []impls.Lease
	for _, k := range keys {
		lease, err := a.TryAcquire(ctx, k)
		if err != nil {
			if !errors.Is(err, impls.ErrBackend) {
				t.Fatalf("TryAcquire %.40q: %v", k, err)
			}
			rejected = append(rejected, fmt.Sprintf("%.40q: %v", k, err))
			continue
		}
		held = append(held, lease)
	}
	for _, lease := range held {
		if l2, err := b.TryAcquire(ctx, lease.Key()); !errors.Is(err, impls.ErrHeld) {
			if err == nil {
				l2.Release(ctx)
			}
			t.Errorf("while %.40q was held another client got %v: two holders", lease.Key(), err)
		}
	}
	for _, k := range partners {
		l2, err := b.TryAcquire(ctx, k)
		if err != nil {
			collide = append(collide, fmt.Sprintf("%.40q: %v", k, err))
			continue
		}
		mustRelease(t, l2)
	}
	for _, lease := range held {
		mustRelease(t, lease)
		l2, err := b.TryAcquire(ctx, lease.Key())
		if err != nil {
			t.Errorf("after its release, %.40q: %v", lease.Key(), err)
			continue
		}
		mustRelease(t, l2)
	}
	e.judge(t, DefectKeyRejected, strings.Join(rejected, "; "))
	e.judge(t, DefectKeysCollide, strings.Join(collide, "; "))
}

func adversarialRaces(t *testing.T, e *env) {
	ctx := context.Background()
	var footprint *redisFootprint
	if len(e.srv.redis) > 0 {
		f := e.srv.redisFootprint(t, e.newLocker(t), freshKey(t))
		footprint = &f
	}
	zkDir := func(key string) string {
		if e.srv.zk == nil {
			return ""
		}
		probe := freshKey(t)
		return strings.ReplaceAll(e.srv.zkLockDir(t, e.newLocker(t), probe), probe, key)
	}

	// The lock is taken from its holder behind its back; its Refresh must
	// not succeed, and above all must not bring the lock back.
	t.Run("RefreshAfterLoss", func(t *testing.T) {
		key := freshKey(t)
		dir := zkDir(key)
		lease := mustAcquire(t, e.newLocker(t), key)
		e.srv.steal(t, key, footprint, dir)
		var defect string
		if err := lease.Refresh(ctx); err == nil {
			defect = "Refresh of a lock deleted behind its holder's back succeeded"
		}
		l2, err := e.newLocker(t).TryAcquire(ctx, key)
		if err != nil {
			defect = strings.TrimPrefix(defect+"; ", "; ") + fmt.Sprintf("after a refresh of a lost lease, another client got %v: the refresh revived it", err)
		} else {
			mustRelease(t, l2)
		}
		e.judge(t, DefectRefreshAfterLoss, defect)
	})

	// The lock is taken from its holder behind its back and granted to
	// another client; the first holder's release must not free the new
	// holder's lock (an owner check that a watchdog or a renewal cannot
	// stand in for: the stale holder has not yet noticed).
	t.Run("StaleReleaseAfterLoss", func(t *testing.T) {
		key := freshKey(t)
		dir := zkDir(key)
		stale := mustAcquire(t, e.newLocker(t), key)
		e.srv.steal(t, key, footprint, dir)
		current := mustAcquire(t, e.newLocker(t), key)
		var defect string
		if err := stale.Release(ctx); err == nil {
			defect = "the stale holder's release succeeded"
		}
		if l3, err := e.newLocker(t).TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
			if err == nil {
				l3.Release(ctx)
			}
			defect = strings.TrimPrefix(defect+"; ", "; ") + fmt.Sprintf("after it a third client got %v while the new holder held the lock: two holders", err)
		}
		current.Release(ctx)
		e.judge(t, DefectStaleReleaseFrees, defect)
	})

	// A waiter whose context is cancelled mid-wait returns at once with the
	// cancellation and leaves nothing behind that would take or block the
	// lock later.
	t.Run("CancelDuringBlockingAcquire", func(t *testing.T) {
		key := freshKey(t)
		holder := mustAcquire(t, e.newLocker(t), key)
		wctx, cancel := context.WithCancel(ctx)
		got := make(chan error, 1)
		go func() {
			l, err := e.newLocker(t).Acquire(wctx, key)
			if err == nil {
				l.Release(ctx)
			}
			got <- err
		}()
		time.Sleep(e.o.TTL / 4)
		cancel()
		var defect string
		select {
		case err := <-got:
			if !errors.Is(err, context.Canceled) {
				defect = fmt.Sprintf("a cancelled Acquire returned %v, want context.Canceled", err)
			}
		case <-time.After(e.recoveryBound()):
			defect = fmt.Sprintf("a cancelled Acquire had not returned %v later", e.recoveryBound())
		}
		mustRelease(t, holder)
		if err := freeSoon(t, e, key); err != nil && defect == "" {
			defect = fmt.Sprintf("after the cancelled wait and the holder's release: %v", err)
		}
		e.judge(t, DefectCancelledAcquire, defect)
	})

	// Close with a lease held is a crash to the server: a lock with expiry
	// frees within the bound; the closed client's lease cannot be released.
	t.Run("CloseWithLeaseHeld", func(t *testing.T) {
		key := freshKey(t)
		a := e.newLocker(t)
		lease := mustAcquire(t, a, key)
		if err := a.Close(); err != nil {
			t.Logf("Close with a lease held: %v", err)
		}
		rerr := lease.Release(ctx)
		if !e.spec.Caps.Expiry {
			t.Logf("no expiry declared; after Close the release says %v", rerr)
			return
		}
		actx, cancel := context.WithTimeout(ctx, e.recoveryBound())
		defer cancel()
		l2, err := e.newLocker(t).Acquire(actx, key)
		if err != nil {
			t.Fatalf("a closed holder's lock was not free within %v: %v", e.recoveryBound(), err)
		}
		mustRelease(t, l2)
	})

	// Close while one of the client's Acquires waits: the wait ends, with an
	// error and no lease, well before its own context would end it.
	t.Run("CloseDuringBlockingAcquire", func(t *testing.T) {
		key := freshKey(t)
		holder := mustAcquire(t, e.newLocker(t), key)
		w := e.newLocker(t)
		wctx, cancel := context.WithTimeout(ctx, 2*e.recoveryBound())
		defer cancel()
		got := make(chan error, 1)
		go func() {
			l, err := w.Acquire(wctx, key)
			if err == nil {
				l.Release(ctx)
				err = errors.New("granted")
			}
			got <- err
		}()
		time.Sleep(e.o.TTL / 4)
		w.Close()
		closed := time.Now()
		var defect string
		select {
		case err := <-got:
			if err.Error() == "granted" || errors.Is(err, context.DeadlineExceeded) {
				defect = fmt.Sprintf("an Acquire on a closed client ended with %v", err)
			} else if d := time.Since(closed); d > e.o.TTL {
				// A poller notices at its next attempt; more than a TTL
				// is a wait that ignored the Close.
				defect = fmt.Sprintf("an Acquire on a closed client returned only %v after the Close", d.Round(time.Millisecond))
			}
		case <-time.After(e.recoveryBound()):
			defect = fmt.Sprintf("an Acquire still waited %v after its client was closed", e.recoveryBound())
		}
		// The holder's lease may have lapsed meanwhile: what matters is
		// that the closed client did not take the lock.
		if err := holder.Release(ctx); err != nil && !errors.Is(err, impls.ErrNotHeld) {
			t.Fatalf("release the holder: %v", err)
		}
		if err := freeSoon(t, e, key); err != nil && defect == "" {
			defect = fmt.Sprintf("after the closed client's wait and the holder's release: %v", err)
		}
		e.judge(t, DefectCloseDuringAcquire, defect)
	})

	if e.spec.Caps.Expiry && !e.spec.Caps.Renewal {
		// A release racing the expiry: whichever wins, the lock ends free and
		// the answer is one of the two.
		t.Run("ReleaseAgainstExpiry", func(t *testing.T) {
			for _, early := range []time.Duration{2 * time.Millisecond, -2 * time.Millisecond} {
				key := freshKey(t)
				lease := mustAcquire(t, e.newLocker(t), key)
				time.Sleep(e.o.TTL - early)
				if err := lease.Release(ctx); err != nil && !errors.Is(err, impls.ErrNotHeld) {
					t.Fatalf("release at the expiry: %v, want nil or ErrNotHeld", err)
				}
				l2, err := e.newLocker(t).TryAcquire(ctx, key)
				if err != nil {
					t.Fatalf("after a release at the expiry: %v", err)
				}
				mustRelease(t, l2)
			}
		})
	}
}

// freeSoon checks that key is free: at once, or, for a lock whose abandoned
// waits take their turn, within the bound.
func freeSoon(t *testing.T, e *env, key string) error {
	t.Helper()
	ctx := context.Background()
	var l impls.Lease
	var err error
	if e.o.AbandonedWaitTakesItsTurn {
		actx, cancel := context.WithTimeout(ctx, e.recoveryBound())
		l, err = e.newLocker(t).Acquire(actx, key)
		cancel()
	} else {
		l, err = e.newLocker(t).TryAcquire(ctx, key)
	}
	if err != nil {
		return err
	}
	return l.Release(ctx)
}
