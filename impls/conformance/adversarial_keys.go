package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/impls"
)

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

// adversarialKeyNames takes key names a careless encoding breaks or
// confuses: each must be a lock of its own, distinct from its partners.
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
