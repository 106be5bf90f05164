package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/impls/redlock"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

const ttl = time.Second

func spec(t *testing.T) impls.Spec {
	t.Helper()
	s, err := impls.Lookup("redlock")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	s := spec(t)
	if s.Backend.Nodes != 5 {
		t.Fatalf("redlock asks for %d nodes, want 5", s.Backend.Nodes)
	}
	conformance.Run(t, s, conformance.Topology(t, s), conformance.Options{})
}

// env is one 5-node topology shared by a test's cases, with direct clients
// to each node for inspecting and planting keys behind the lock's back.
type env struct {
	topo   *cluster.Topology
	direct []*redis.Client
	seq    int
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{topo: conformance.Topology(t, spec(t))}
	for _, addr := range e.topo.Endpoints().Addrs(topology.Redis) {
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		e.direct = append(e.direct, rdb)
	}
	return e
}

func (e *env) key(t *testing.T) string {
	e.seq++
	return fmt.Sprintf("%s-%d-%d", t.Name(), time.Now().UnixNano(), e.seq)
}

func (e *env) locker(t *testing.T) *redlock.Redlock {
	t.Helper()
	l, err := redlock.New(impls.Config{Servers: e.topo.Endpoints(), TTL: ttl, ClientID: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// nodesHolding lists the nodes (among idx) on which key exists.
func (e *env) nodesHolding(t *testing.T, key string, idx []int) []int {
	t.Helper()
	var out []int
	for _, i := range idx {
		n, err := e.direct[i].Exists(context.Background(), key).Result()
		if err != nil {
			t.Fatalf("EXISTS on node %d: %v", i, err)
		}
		if n == 1 {
			out = append(out, i)
		}
	}
	return out
}

// awaitHeldOnAll waits, up to a second, until key exists on every node.
func (e *env) awaitHeldOnAll(t *testing.T, key string) {
	t.Helper()
	all := others(len(e.direct), nil)
	for deadline := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
		held := e.nodesHolding(t, key, all)
		if len(held) == len(all) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a second after the grant, key %s is on nodes %v only, want all %d", key, held, len(all))
		}
	}
}

func others(all int, except []int) []int {
	var out []int
	for i := range all {
		if !slices.Contains(except, i) {
			out = append(out, i)
		}
	}
	return out
}

// TestNodeFaults kills or freezes real nodes and checks the quorum rule:
// any 3 of 5 suffice, 2 do not. A frozen node costs one per-node timeout,
// not the caller's whole deadline.
func TestNodeFaults(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		kill    []int
		pause   []int
		wantErr error // nil: granted
	}{
		{name: "two of five killed: quorum of three left", kill: []int{0, 3}},
		{name: "three of five killed: no quorum", kill: []int{0, 2, 4}, wantErr: impls.ErrBackend},
		{name: "two of five paused: skipped after the per-node timeout", pause: []int{1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := e.key(t)
			l := e.locker(t)
			// Warm the pools first, so the faults hit open connections as
			// they would in a running client.
			warm, err := l.TryAcquire(ctx, key+"-warm")
			if err != nil {
				t.Fatalf("warm-up acquire: %v", err)
			}
			if err := warm.Release(ctx); err != nil {
				t.Fatalf("warm-up release: %v", err)
			}

			for _, i := range tt.kill {
				if err := e.topo.Lock(topology.Redis)[i].Kill(); err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range tt.pause {
				if err := e.topo.Lock(topology.Redis)[i].Pause(); err != nil {
					t.Fatal(err)
				}
			}
			defer func() {
				for _, i := range tt.pause {
					if err := e.topo.Lock(topology.Redis)[i].Resume(); err != nil {
						t.Error(err)
					}
				}
				for _, i := range tt.kill {
					if err := e.topo.Lock(topology.Redis)[i].Restart(ctx, false); err != nil {
						t.Error(err)
					}
				}
			}()
			// The caller's deadline is far longer than the per-node timeout,
			// so only the per-node timeout can end the wait on a frozen node
			// in time for the lease to be worth having.
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			lease, err := l.TryAcquire(actx, key)
			cancel()
			faulty := append(slices.Clone(tt.kill), tt.pause...)
			live := others(5, faulty)

			if tt.wantErr != nil {
				want := []error{tt.wantErr}
				if len(tt.kill) > 0 && cluster.ContainerMode() {
					// A killed server's port stays published in container
					// mode: the engine's proxy accepts the dial and closes it
					// (EOF) where a local port refuses it, so the client has
					// sent its SET and cannot know whether a server got it.
					// Outcome unknown is then the honest answer, and still
					// no grant.
					want = append(want, impls.ErrUnknown)
				}
				if !slices.ContainsFunc(want, func(w error) bool { return errors.Is(err, w) }) {
					t.Fatalf("acquire: %v, want one of %v", err, want)
				}
				if got := e.nodesHolding(t, key, live); len(got) > 0 {
					t.Fatalf("failed acquire left the key on live nodes %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("acquire with nodes %v down: %v", faulty, err)
			}
			if got := lease.(interface{ Nodes() []int }).Nodes(); !slices.Equal(got, live) {
				t.Errorf("lease granted on %v, want the live nodes %v", got, live)
			}
			if got := e.nodesHolding(t, key, live); !slices.Equal(got, live) {
				t.Errorf("key present on %v, want all live nodes %v", got, live)
			}
			if d := lease.(impls.Deadliner).ValidUntil(); !time.Now().Before(d) {
				t.Errorf("lease already past its validity (%v) right after the grant", d)
			}
			if err := lease.Release(ctx); err != nil {
				t.Errorf("release with nodes %v down: %v", faulty, err)
			}
			if got := e.nodesHolding(t, key, live); len(got) > 0 {
				t.Errorf("release left the key on live nodes %v", got)
			}
		})
	}
}

// TestForeignKeys plants other owners' keys on some nodes and checks how
// one attempt is judged: a minority held still grants, a majority held is
// ErrHeld, and a split vote (nobody with a majority) is ErrHeld too and
// leaves none of our keys behind.
func TestForeignKeys(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		foreign []int // nodes where another client's key sits
		kill    []int
		wantErr error
	}{
		{name: "held on a minority", foreign: []int{0, 1}},
		{name: "held on a majority", foreign: []int{1, 2, 3}, wantErr: impls.ErrHeld},
		{name: "split vote", foreign: []int{0, 1}, kill: []int{4}, wantErr: impls.ErrHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := e.key(t)
			for _, i := range tt.foreign {
				if err := e.direct[i].Set(ctx, key, "someone-else", 10*time.Second).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range tt.kill {
				if err := e.topo.Lock(topology.Redis)[i].Kill(); err != nil {
					t.Fatal(err)
				}
			}
			defer func() {
				for _, i := range tt.kill {
					if err := e.topo.Lock(topology.Redis)[i].Restart(ctx, false); err != nil {
						t.Error(err)
					}
				}
			}()
			before := e.scriptCalls(t, tt.foreign)
			lease, err := e.locker(t).TryAcquire(ctx, key)
			mine := others(5, append(slices.Clone(tt.foreign), tt.kill...))
			if tt.wantErr != nil {
				want := []error{tt.wantErr}
				if len(tt.kill) > 0 && cluster.ContainerMode() {
					// A killed server's port stays published in container
					// mode: the engine's proxy accepts the dial and closes it
					// (EOF) where a local port refuses it, so the client has
					// sent its SET and cannot know whether a server got it.
					// Outcome unknown is then the honest answer, and still
					// no grant.
					want = append(want, impls.ErrUnknown)
				}
				if !slices.ContainsFunc(want, func(w error) bool { return errors.Is(err, w) }) {
					t.Fatalf("acquire: %v, want one of %v", err, want)
				}
				// A node that answered "held" has nothing of this attempt's
				// (its token is new): the cleanup spares it.
				if after := e.scriptCalls(t, tt.foreign); !slices.Equal(after, before) {
					t.Errorf("the failed attempt ran scripts on the nodes that answered held %v: calls %v, then %v", tt.foreign, before, after)
				}
				if got := e.nodesHolding(t, key, mine); len(got) > 0 {
					t.Fatalf("failed acquire left our key on nodes %v", got)
				}
				for _, i := range tt.foreign {
					if v, _ := e.direct[i].Get(ctx, key).Result(); v != "someone-else" {
						t.Fatalf("node %d: the other owner's key became %q", i, v)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			if got := lease.(interface{ Nodes() []int }).Nodes(); !slices.Equal(got, mine) {
				t.Errorf("granted on %v, want %v", got, mine)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
			for _, i := range tt.foreign {
				if v, _ := e.direct[i].Get(ctx, key).Result(); v != "someone-else" {
					t.Fatalf("node %d: our release touched the other owner's key (now %q)", i, v)
				}
			}
		})
	}
}

// scriptCalls counts, from each node's own command statistics, the Lua
// scripts it has run (EVALSHA and EVAL).
func (e *env) scriptCalls(t *testing.T, nodes []int) []int64 {
	t.Helper()
	var out []int64
	for _, i := range nodes {
		stats, err := e.direct[i].InfoMap(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatalf("node %d: INFO commandstats: %v", i, err)
		}
		var n int64
		for _, cmd := range []string{"cmdstat_evalsha", "cmdstat_eval"} {
			var calls int64
			if v, ok := stats["Commandstats"][cmd]; ok {
				if _, err := fmt.Sscanf(v, "calls=%d", &calls); err != nil {
					t.Fatalf("node %d: %s=%q: %v", i, cmd, v, err)
				}
			}
			n += calls
		}
		out = append(out, n)
	}
	return out
}

func TestLeaseValidityAndToken(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	before := time.Now()
	lease, err := e.locker(t).Acquire(ctx, e.key(t))
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	if tok, ok := lease.Token(); ok || tok != 0 {
		t.Errorf("Token() = %d, %v; Redlock issues no fencing token", tok, ok)
	}
	d, ok := lease.(impls.Deadliner)
	if !ok {
		t.Fatal("a Redlock lease must implement impls.Deadliner")
	}
	granted := d.ValidUntil()
	// Drift is subtracted, so validity ends strictly before start + TTL.
	if !granted.Before(before.Add(ttl)) {
		t.Errorf("ValidUntil %v is not before grant time + TTL %v", granted, before.Add(ttl))
	}
	if !granted.After(before) {
		t.Errorf("ValidUntil %v leaves no validity after the grant at %v", granted, before)
	}
	time.Sleep(20 * time.Millisecond)
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if refreshed := d.ValidUntil(); !refreshed.After(granted) {
		t.Errorf("refresh did not move ValidUntil forward: %v, was %v", refreshed, granted)
	}
}

// TestRefreshNeedsMajority deletes the lock's keys behind its back: with
// our token left on a majority the refresh succeeds on those nodes; with it
// left on a minority it fails with ErrNotHeld and reports the lease lost.
func TestRefreshNeedsMajority(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		deleted []int
		wantErr error
	}{
		{name: "deleted on two of five", deleted: []int{1, 3}},
		{name: "deleted on three of five", deleted: []int{0, 2, 4}, wantErr: impls.ErrNotHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := e.key(t)
			lease, err := e.locker(t).TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			// The grant returns at the first majority; the SETs to the
			// other nodes go on behind it. One landing after our DEL would
			// look like a refresh that revived the key, so the deletes wait
			// for every node to hold it.
			e.awaitHeldOnAll(t, key)
			for _, i := range tt.deleted {
				if err := e.direct[i].Del(ctx, key).Err(); err != nil {
					t.Fatal(err)
				}
			}
			err = lease.Refresh(ctx)
			left := others(5, tt.deleted)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("refresh: %v, want %v", err, tt.wantErr)
				}
				select {
				case <-lease.Lost():
				default:
					t.Error("Lost() not closed after a refresh found the lock gone")
				}
				if got := e.nodesHolding(t, key, tt.deleted); len(got) > 0 {
					t.Errorf("refresh revived the key on nodes %v", got)
				}
				// Our token is left on a minority: the release deletes it
				// but says the lock was not ours, as the refresh did.
				if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
					t.Errorf("release with our token on %v: %v, want %v", left, err, impls.ErrNotHeld)
				}
				if got := e.nodesHolding(t, key, left); len(got) > 0 {
					t.Errorf("release left our key on nodes %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("refresh: %v", err)
			}
			if got := lease.(interface{ Nodes() []int }).Nodes(); !slices.Equal(got, left) {
				t.Errorf("refreshed on %v, want %v", got, left)
			}
			if got := e.nodesHolding(t, key, tt.deleted); len(got) > 0 {
				t.Errorf("refresh revived the key on nodes %v", got)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
