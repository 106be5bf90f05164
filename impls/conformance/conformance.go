// Package conformance is the behaviour every Locker must show, run against
// real servers: each implementation's test calls Run. Deliberately broken
// variants declare where they break (Options), and the suite then asserts
// the broken behaviour instead, so the lesson is tested too.
//
// Mutual exclusion under contention, judged by the linearizability checker,
// is not part of this suite: a lock's suite does not know the scenarios.
// The verdict matrix (scenarios' TestVerdictMatrix, `bench matrix`) runs
// every registered lock's contention cell against the reviewed expectation.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// Options tune the suite to one implementation.
type Options struct {
	TTL time.Duration // lease TTL / session timeout; default 1s
	// ForeignRelease: a stale lease's release frees the new holder's lock
	// (redis-del-release, redis-get-del-release, redis-getset).
	ForeignRelease bool
	// SkipPausedServer skips the unknown-outcome check with a SIGSTOPped
	// server, for clients whose first request against a stalled server is a
	// read (so "backend failure" is the honest answer) or that queue
	// requests across a stall rather than fail.
	SkipPausedServer bool
	// AbandonedWaitTakesItsTurn: an acquire abandoned by its context stays
	// queued until its turn comes and then passes the lock on (go-zookeeper's
	// zk.Lock cannot cancel a wait). The check then waits for the lock with
	// a bounded Acquire instead of expecting it free at once.
	AbandonedWaitTakesItsTurn bool
	// KnownDefects records, for a peer or a deliberately broken variant,
	// the adversarial defects (Defect* names) it shows, each with why; the
	// suite then asserts they still show. Our correct locks record only what
	// no client can defend against (CounterResetLimitation).
	KnownDefects map[string]string
	// Only, when set, names the checks this run makes (top-level subtest
	// names, e.g. "CapabilityFencing"); the others are skipped, saying so.
	// For a guest that wraps a lock the lab also runs natively: the native
	// lock's own run proves the lock, so a brief run of the guest need
	// only exercise the protocol around it.
	Only []string
	// Leave names checks this run leaves out, skipped saying so: make
	// test's brief run of a guest leaves its adversarial suites, the
	// longest part of it, to the guest's full run.
	Leave []string
}

// check runs one top-level check as a subtest, unless Options.Only or
// Options.Leave leaves it out.
func (e *env) check(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		if len(e.o.Only) > 0 && !slices.Contains(e.o.Only, name) {
			t.Skipf("not among this run's checks (Options.Only: %s)", strings.Join(e.o.Only, ", "))
		}
		if slices.Contains(e.o.Leave, name) {
			t.Skipf("left out of this run (Options.Leave: %s)", strings.Join(e.o.Leave, ", "))
		}
		f(t)
	})
}

var keySeq atomic.Int64

// env is one implementation under test with its servers.
type env struct {
	spec impls.Spec
	topo *cluster.Topology
	o    Options
	seq  int

	srv *server // the suite's own clients of the same servers

	silencedOnce sync.Once
	silenced     silenced
}

func (e *env) config() impls.Config {
	e.seq++
	return impls.Config{
		Servers: e.topo.Endpoints(),
		TTL:     e.o.TTL, ClientID: fmt.Sprintf("conformance-%d", e.seq),
	}
}

func (e *env) newLocker(t *testing.T) impls.Locker {
	t.Helper()
	return e.build(t, e.config())
}

func (e *env) build(t *testing.T, cfg impls.Config) impls.Locker {
	t.Helper()
	l, err := e.spec.New(cfg)
	if err != nil {
		t.Fatalf("new %s: %v", e.spec.Name, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// linkedLocker is a client whose every connection passes through links of
// its own, so a probe can count what it sends or silence it.
func (e *env) linkedLocker(t *testing.T) (impls.Locker, links) {
	t.Helper()
	cfg := e.config()
	var ls links
	relink := func(addrs []string) []string {
		out := make([]string, len(addrs))
		for i, a := range addrs {
			l := newLink(t, a)
			ls = append(ls, l)
			out[i] = l.addr()
		}
		return out
	}
	servers := topology.Endpoints{}
	for kind, ep := range cfg.Servers {
		if kind == topology.Postgres {
			for i, dsn := range ep.Addrs {
				l := newLink(t, pgAddr(dsn))
				ls = append(ls, l)
				ep.Addrs = slices.Clone(ep.Addrs)
				ep.Addrs[i] = relinkDSN(dsn, l.addr())
			}
		} else if kind == topology.MySQL {
			ep.Addrs = slices.Clone(ep.Addrs)
			for i, dsn := range ep.Addrs {
				var l *link
				ep.Addrs[i], l = relinkMySQL(t, dsn)
				ls = append(ls, l)
			}
		} else {
			ep.Addrs = relink(ep.Addrs)
		}
		servers[kind] = ep
	}
	cfg.Servers = servers
	l := e.build(t, cfg)
	// Cleanups run last-in first-out: cut the links before Close, so that a
	// client that says goodbye to a silenced server is not kept waiting.
	t.Cleanup(func() {
		for _, l := range ls {
			l.close()
		}
	})
	return l, ls
}

func freshKey(t *testing.T) string {
	return fmt.Sprintf("conf-%d-%d", time.Now().UnixNano(), keySeq.Add(1))
}

// Run runs every check that applies to spec. topo must hold the servers the
// implementation needs (started by the caller, shared by the checks); the
// last check kills and restarts them.
func Run(t *testing.T, spec impls.Spec, topo *cluster.Topology, o Options) {
	if o.TTL <= 0 {
		o.TTL = time.Second
	}
	e := &env{spec: spec, topo: topo, o: o, srv: newServer(t, topo)}
	newLocker := e.newLocker
	ctx := context.Background()

	e.check(t, "TryAcquireReturnsHeldAtOnce", func(t *testing.T) {
		key := freshKey(t)
		a, b := newLocker(t), newLocker(t)
		lease := mustAcquire(t, a, key)
		// A TryAcquire that blocked would run into this deadline instead.
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := b.TryAcquire(tctx, key); !errors.Is(err, impls.ErrHeld) {
			t.Fatalf("TryAcquire of a held lock: %v, want ErrHeld", err)
		}
		mustRelease(t, lease)
		l2, err := b.TryAcquire(ctx, key)
		if err != nil {
			t.Fatalf("TryAcquire after release: %v", err)
		}
		mustRelease(t, l2)
	})

	e.check(t, "ReleaseTwiceIsNotHeld", func(t *testing.T) {
		lease := mustAcquire(t, newLocker(t), freshKey(t))
		mustRelease(t, lease)
		if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
			t.Fatalf("second release: %v, want ErrNotHeld", err)
		}
	})

	e.check(t, "BlockedAcquireEndsWithContextAndLeavesNothing", func(t *testing.T) {
		key := freshKey(t)
		a, b, c := newLocker(t), newLocker(t), newLocker(t)
		lease := mustAcquire(t, a, key)
		bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := b.Acquire(bctx, key)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("blocked Acquire: %v, want context.DeadlineExceeded", err)
		}
		mustRelease(t, lease)
		// Nothing of b's abandoned wait may stand in c's way.
		var l3 impls.Lease
		if o.AbandonedWaitTakesItsTurn {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			l3, err = c.Acquire(wctx, key)
			cancel()
		} else {
			l3, err = c.TryAcquire(ctx, key)
		}
		if err != nil {
			t.Fatalf("TryAcquire after the abandoned wait: %v", err)
		}
		mustRelease(t, l3)
	})

	// Every capability is probed on every lock and compared with what it
	// declares; nothing below is skipped because of a declaration alone.
	runCapabilities(t, e)
	runAdversarial(t, e)
	runServerSide(t, e)

	if spec.Caps.Expiry && !spec.Caps.Renewal {
		e.check(t, "LeaseExpiresAndRefreshCannotReviveIt", func(t *testing.T) {
			key := freshKey(t)
			a, b := newLocker(t), newLocker(t)
			lease := mustAcquire(t, a, key)
			if err := lease.Refresh(ctx); err != nil {
				t.Fatalf("refresh of a live lease: %v", err)
			}
			time.Sleep(o.TTL + o.TTL/2)
			if err := lease.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("refresh after the TTL: %v, want ErrNotHeld", err)
			}
			l2, err := b.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("TryAcquire after the TTL: %v", err)
			}
			mustRelease(t, l2)
		})

		e.check(t, "OnlyTheOwnersReleaseSucceeds", func(t *testing.T) {
			key := freshKey(t)
			a, b, c := newLocker(t), newLocker(t), newLocker(t)
			stale := mustAcquire(t, a, key)
			time.Sleep(o.TTL + o.TTL/2)
			current := mustAcquire(t, b, key)
			err := stale.Release(ctx)
			_, cerr := c.TryAcquire(ctx, key)
			if o.ForeignRelease {
				// The lesson: the stale holder deleted the new holder's lock.
				if err != nil || cerr != nil {
					t.Fatalf("broken release: stale release %v, third client %v; want both nil (the flaw)", err, cerr)
				}
				return
			}
			if !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("stale lease's release: %v, want ErrNotHeld", err)
			}
			if !errors.Is(cerr, impls.ErrHeld) {
				t.Fatalf("after a stale release a third client got %v, want ErrHeld", cerr)
			}
			mustRelease(t, current)
		})
	}

	if !o.SkipPausedServer && len(topo.Nodes()) > 0 {
		e.check(t, "StalledServerGivesUnknownOutcome", func(t *testing.T) {
			key := freshKey(t)
			l := newLocker(t)
			for _, n := range lockNodes(topo) {
				if err := n.Pause(); err != nil {
					t.Fatal(err)
				}
			}
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := l.TryAcquire(actx, key)
			cancel()
			for _, n := range lockNodes(topo) {
				if err := n.Resume(); err != nil {
					t.Fatal(err)
				}
			}
			if !errors.Is(err, impls.ErrUnknown) {
				t.Fatalf("acquire against a stalled server: %v, want ErrUnknown (it may have been granted)", err)
			}
		})
	}

	if len(topo.Nodes()) > 0 {
		e.check(t, "ServerGoneGivesBackendFailure", func(t *testing.T) {
			key := freshKey(t)
			l := newLocker(t)
			nodes := lockNodes(topo)
			for _, n := range nodes {
				if err := n.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := l.TryAcquire(actx, key)
			cancel()
			for _, n := range nodes {
				if rerr := n.Restart(ctx, true); rerr != nil {
					t.Fatal(rerr)
				}
			}
			if !errors.Is(err, impls.ErrBackend) && !errors.Is(err, impls.ErrUnknown) {
				t.Fatalf("acquire with the server gone: %v, want ErrBackend", err)
			}
		})
	}
}

// lockNodes are the topology's nodes other than the resource.
func lockNodes(topo *cluster.Topology) []*cluster.Node {
	var out []*cluster.Node
	for _, n := range topo.Nodes() {
		if n != topo.Resource {
			out = append(out, n)
		}
	}
	return out
}

func mustAcquire(t *testing.T, l impls.Locker, key string) impls.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return lease
}

func mustRelease(t *testing.T, lease impls.Lease) {
	t.Helper()
	if err := lease.Release(context.Background()); err != nil {
		t.Fatalf("release %s: %v", lease.Key(), err)
	}
}

// Topology starts the servers spec needs for the suite on the single
// topology and stops them when the test ends.
func Topology(t *testing.T, spec impls.Spec) *cluster.Topology {
	t.Helper()
	return TopologyOn(t, spec, topology.SingleName)
}

// TopologyOn starts the servers spec needs on the named topology (a
// ZooKeeper lock on the ensemble, say) and stops them when the test ends.
func TopologyOn(t *testing.T, spec impls.Spec, name string) *cluster.Topology {
	t.Helper()
	named, err := topology.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	decl, err := spec.Backend.On(named)
	if err != nil {
		t.Fatal(err)
	}
	// A topology this server mode cannot start (container mode starts no
	// Redis Cluster) skips the test, saying why.
	if err := cluster.StartsHere(decl); err != nil {
		t.Skip(err)
	}
	topo, err := cluster.Start(context.Background(), decl, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	return topo
}
