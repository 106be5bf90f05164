package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
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
	if len(e.topo.Endpoints().Addrs(topology.Redis)) > 0 {
		e.check(t, "AdversarialRedis", func(t *testing.T) { adversarialRedis(t, e) })
	}
	if len(e.topo.Endpoints().Addrs(topology.ZooKeeper)) > 0 {
		e.check(t, "AdversarialZooKeeper", func(t *testing.T) { adversarialZooKeeper(t, e) })
	}
	if e.topo.Endpoints().First(topology.Postgres) != "" {
		e.check(t, "AdversarialPostgres", func(t *testing.T) { adversarialPostgres(t, e) })
	}
	if e.srv.mysql != nil {
		e.check(t, "AdversarialMySQL", func(t *testing.T) { adversarialMySQL(t, e) })
	}
	e.check(t, "AdversarialKeyNames", func(t *testing.T) { adversarialKeyNames(t, e) })
	e.check(t, "AdversarialRaces", func(t *testing.T) { adversarialRaces(t, e) })
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

// ForeignContender names the defect of ignoring a contender of the named
// library (Curator, GoZookeeper, Kazoo) queued in the lock's directory: it
// is recorded per library, since a lock may honour one library's node
// names and not another's (Curator honours go-zookeeper's, not kazoo's).
func ForeignContender(library string) string { return DefectForeignContender + ":" + library }
