package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// adversarialRedis puts a Redis lock's key in state an operator or an
// older deployment leaves: written by hand without an expiry, of another
// type, and its fencing counter gone, reset or garbled.
func adversarialRedis(t *testing.T, e *env) {
	ctx := context.Background()
	f := e.srv.redisFootprint(t, e.newLocker(t), freshKey(t))

	plant := func(t *testing.T, key string, k redisKey, typ string) {
		t.Helper()
		name := f.rename(k, key)
		rdb := e.srv.redisAt(t, k.node, name)
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
			got, err := e.srv.redisAt(t, k.node, name).Type(ctx, name).Result()
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
				if err := e.srv.redisAt(t, k.node, f.rename(k, key)).Set(ctx, f.rename(k, key), garble.value, 0).Err(); err != nil {
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
				if err := e.srv.redisAt(t, k.node, f.rename(k, key)).Del(ctx, f.rename(k, key)).Err(); err != nil {
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
				if err := reset.apply(e.srv.redisAt(t, k.node, f.rename(k, key)), f.rename(k, key), last); err != nil {
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
