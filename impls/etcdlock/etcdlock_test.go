package etcdlock_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/impls/etcdlock"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

// The suite on one etcd: every declared capability probed, the adversarial
// state and races, a stalled and a killed server. A 1s TTL is a 1s etcd
// lease (cluster/etcd.go starts etcd with raft timing that allows it).
func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		{"etcd-lock", conformance.Options{TTL: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := impls.Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), tt.opts)
		})
	}
}

// server starts one etcd and returns its endpoints and a plain client.
func server(t *testing.T) (topology.Endpoints, *clientv3.Client) {
	t.Helper()
	spec, err := impls.Lookup("etcd-lock")
	if err != nil {
		t.Fatal(err)
	}
	topo := conformance.Topology(t, spec)
	c, err := clientv3.New(clientv3.Config{Endpoints: topo.Endpoints().Addrs(topology.Etcd), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return topo.Endpoints(), c
}

func newLocker(t *testing.T, ep topology.Endpoints, ttl time.Duration) *etcdlock.Locker {
	t.Helper()
	l, err := etcdlock.New(impls.Config{Servers: ep, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func own(l impls.Lease) string { return l.(interface{ Own() string }).Own() }

// The two open etcd reports the lab tried on concurrency.Mutex
// (impls/peers/etcdmutex_test.go reproduces both), against our lock:
//   - #22082: a release whose key is already gone must not delete a newer
//     lock of the same client (same lease): ours names each acquire's key
//     apart and deletes only the create revision it was granted;
//   - #19597: a waiter whose own lease ends must stop waiting then, not
//     when the key before it goes.
func TestOpenEtcdReportsAgainstOurLock(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, ep topology.Endpoints, c *clientv3.Client)
	}{
		{"22082-stale-release-of-same-lease", func(t *testing.T, ep topology.Endpoints, c *clientv3.Client) {
			ctx := context.Background()
			l, other := newLocker(t, ep, 2*time.Second), newLocker(t, ep, 2*time.Second)
			first, err := l.Acquire(ctx, "r22082")
			if err != nil {
				t.Fatal(err)
			}
			// The release's delete applied, its reply lost.
			if _, err := c.Delete(ctx, own(first)); err != nil {
				t.Fatal(err)
			}
			second, err := l.Acquire(ctx, "r22082")
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("the first lease's (retried) release: %v, want ErrNotHeld", err)
			}
			if _, err := other.TryAcquire(ctx, "r22082"); !errors.Is(err, impls.ErrHeld) {
				t.Fatalf("after the stale release another client got %v, want ErrHeld: the newer lock was deleted", err)
			}
			if err := second.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"19597-waiter-outlives-its-lease", func(t *testing.T, ep topology.Endpoints, c *clientv3.Client) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			holder, waiter := newLocker(t, ep, 2*time.Second), newLocker(t, ep, 2*time.Second)
			h, err := holder.Acquire(ctx, "r19597")
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release(ctx)
			done := make(chan error, 1)
			go func() {
				l, err := waiter.Acquire(ctx, "r19597")
				if err == nil {
					l.Release(ctx)
				}
				done <- err
			}()
			// The waiter's key is the second in line; its name starts with
			// its lease's id.
			var waiting string
			for waiting == "" {
				r, err := c.Get(ctx, etcdlock.Prefix("r19597"), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Kvs) == 2 {
					waiting = string(r.Kvs[1].Key)
				}
				time.Sleep(20 * time.Millisecond)
			}
			hexID, _, _ := strings.Cut(strings.TrimPrefix(waiting, etcdlock.Prefix("r19597")), "-")
			id, err := strconv.ParseInt(hexID, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			revoked := time.Now()
			if _, err := c.Revoke(ctx, clientv3.LeaseID(id)); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				// Not held, not a backend failure: it stood in line, so it
				// met the lock (impls.ErrNotHeld).
				if !errors.Is(err, impls.ErrNotHeld) {
					t.Fatalf("the waiter whose lease ended got %v, want ErrNotHeld", err)
				}
				t.Logf("the waiter returned %v after its lease was revoked, the holder still holding", time.Since(revoked).Round(time.Millisecond))
			case <-time.After(3 * time.Second):
				t.Fatal("the waiter went on waiting after its lease ended (#19597)")
			}
		}},
	}
	ep, c := server(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, ep, c) })
	}
}
