package zklock_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/impls/zklock"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts conformance.Options
	}{
		// ZooKeeper's tickTime is 100ms here, so a 1s session is 10 ticks.
		// SkipPausedServer stays off: against a SIGSTOPped server the create
		// gets no reply, the client drops the silent connection after 2/3 of
		// the session timeout, and its search for the node by GUID cannot
		// finish before the suite's 2s context ends, so the outcome is
		// reported unknown, as it should be.
		{"zookeeper", conformance.Options{TTL: time.Second}},
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

// The tests below share one ZooKeeper server (the conformance suite kills
// and restarts its own); TestMain stops it.
var (
	zkOnce sync.Once
	zkAddr string
	zkErr  error
	keySeq atomic.Int64
)

func server(t *testing.T) string {
	t.Helper()
	zkOnce.Do(func() {
		var topo *cluster.Topology
		topo, zkErr = cluster.Start(context.Background(), topology.Of(topology.Single(topology.ZooKeeper)), cluster.External{})
		if zkErr == nil {
			zkAddr = topo.Endpoints().Addrs(topology.ZooKeeper)[0]
		}
	})
	if zkErr != nil {
		t.Fatal(zkErr)
	}
	return zkAddr
}

func freshKey() string { return fmt.Sprintf("zk-%d-%d", time.Now().UnixNano(), keySeq.Add(1)) }

func newLocker(t *testing.T, addr string, ttl time.Duration) *zklock.Locker {
	t.Helper()
	l, err := zklock.New(impls.Config{Servers: topology.At(topology.ZooKeeper, addr), TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// observer is a plain client that looks at the lock's nodes from outside.
func observer(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 2*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-deadline:
			t.Fatal("observer: no session")
		}
	}
}

// children lists the lock's contenders in sequence order.
func children(t *testing.T, obs *zk.Conn, key string) []string {
	t.Helper()
	c, _, err := obs.Children(zklock.Root + "/" + key)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(c, func(i, j int) bool {
		a, _ := zklock.SeqOf(c[i])
		b, _ := zklock.SeqOf(c[j])
		return a < b
	})
	return c
}

// eventually polls cond every 20ms for up to 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func acquire(t *testing.T, l impls.Locker, key string) impls.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return lease
}

func nodeOf(l impls.Lease) string { return l.(interface{ Node() string }).Node() }

// watchesByPath asks the server, with the four-letter command wchp, which
// sessions watch which paths.
func watchesByPath(t *testing.T, addr string) map[string][]string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("wchp")); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	path := ""
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t"):
			out[path] = append(out[path], strings.TrimSpace(line))
		case line != "":
			path = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lockWatches keeps the watches under one lock's path.
func lockWatches(t *testing.T, addr, key string) map[string][]string {
	t.Helper()
	dir := zklock.Root + "/" + key
	out := map[string][]string{}
	for p, s := range watchesByPath(t, addr) {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out[p] = s
		}
	}
	return out
}

func sessionHex(l *zklock.Locker) string { return fmt.Sprintf("0x%x", l.SessionID()) }

// Each waiter must watch its immediate predecessor and nothing else (no
// watch on the parent, none on the holder from more than one waiter), so a
// release wakes exactly one client; and grants follow arrival order.
func TestWaitersWatchOnlyTheirPredecessor(t *testing.T) {
	addr := server(t)
	obs := observer(t, addr)
	tests := []struct {
		name    string
		waiters int
	}{
		{"one waiter", 1},
		{"three waiters", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := freshKey()
			dir := zklock.Root + "/" + key
			lockers := make([]*zklock.Locker, tt.waiters+1)
			for i := range lockers {
				lockers[i] = newLocker(t, addr, 2*time.Second)
			}
			held := acquire(t, lockers[0], key)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			granted := make([]chan result, len(lockers))
			for i := 1; i < len(lockers); i++ {
				granted[i] = make(chan result, 1)
				go func(i int) {
					lease, err := lockers[i].Acquire(ctx, key)
					granted[i] <- result{lease, err}
				}(i)
				// Start the next waiter only once this one stands in line,
				// so that line order is locker order.
				eventually(t, fmt.Sprintf("waiter %d's node exists", i), func() bool {
					return len(children(t, obs, key)) == i+1
				})
			}
			lastToken, _ := held.Token()
			for next := 1; next < len(lockers); next++ {
				line := children(t, obs, key)
				want := map[string][]string{}
				for i := next; i < len(lockers); i++ {
					want[dir+"/"+line[i-next]] = []string{sessionHex(lockers[i])}
				}
				// Watches are set a moment after a waiter's node appears.
				var got map[string][]string
				deadline := time.Now().Add(5 * time.Second)
				for got = lockWatches(t, addr, key); !reflect.DeepEqual(got, want); got = lockWatches(t, addr, key) {
					if time.Now().After(deadline) {
						t.Fatalf("watches under %s: %v, want %v (each waiter on its predecessor only)", dir, got, want)
					}
					time.Sleep(20 * time.Millisecond)
				}
				if err := held.Release(context.Background()); err != nil {
					t.Fatal(err)
				}
				select {
				case r := <-granted[next]:
					if r.err != nil {
						t.Fatalf("waiter %d: %v", next, r.err)
					}
					held = r.lease
				case <-time.After(10 * time.Second):
					t.Fatalf("waiter %d was not granted the lock after its predecessor released", next)
				}
				for later := next + 1; later < len(lockers); later++ {
					select {
					case <-granted[later]:
						t.Fatalf("waiter %d was granted the lock out of turn (waiter %d is next)", later, next)
					default:
					}
				}
				tok, _ := held.Token()
				if tok <= lastToken {
					t.Fatalf("grant %d has token %d, not above %d", next, tok, lastToken)
				}
				lastToken = tok
			}
			if err := held.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c := children(t, obs, key); len(c) != 0 {
				t.Fatalf("nodes left after every release: %v", c)
			}
		})
	}
}

// A waiter lists the line again when its predecessor's node goes: the
// predecessor may have been a waiter that gave up or whose session ended,
// with the holder still ahead.
func TestPredecessorGoneWhileTheHolderHolds(t *testing.T) {
	addr := server(t)
	obs := observer(t, addr)
	tests := []struct {
		name  string
		leave func(l *zklock.Locker, cancel context.CancelFunc)
	}{
		{"the waiter ahead gives up", func(_ *zklock.Locker, cancel context.CancelFunc) { cancel() }},
		{"the waiter ahead's session ends", func(l *zklock.Locker, _ context.CancelFunc) { l.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := freshKey()
			holder, ahead, last := newLocker(t, addr, 2*time.Second), newLocker(t, addr, 2*time.Second), newLocker(t, addr, 2*time.Second)
			held := acquire(t, holder, key)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			aheadCtx, aheadCancel := context.WithCancel(ctx)
			defer aheadCancel()
			aheadDone := make(chan result, 1)
			go func() {
				lease, err := ahead.Acquire(aheadCtx, key)
				aheadDone <- result{lease, err}
			}()
			eventually(t, "the first waiter stands in line", func() bool { return len(children(t, obs, key)) == 2 })
			lastDone := make(chan result, 1)
			go func() {
				lease, err := last.Acquire(ctx, key)
				lastDone <- result{lease, err}
			}()
			eventually(t, "the second waiter stands in line", func() bool { return len(children(t, obs, key)) == 3 })
			// Its watch on the first waiter is set a moment after its node.
			eventually(t, "the second waiter watches the first", func() bool {
				for _, sessions := range lockWatches(t, addr, key) {
					for _, s := range sessions {
						if s == sessionHex(last) {
							return true
						}
					}
				}
				return false
			})
			tt.leave(ahead, aheadCancel)
			if r := <-aheadDone; r.err == nil {
				t.Fatalf("the waiter ahead was granted the lock while it was held")
			}
			eventually(t, "the first waiter's node is gone", func() bool { return len(children(t, obs, key)) == 2 })
			// The second waiter has had the deletion event; the lock is
			// still held, so it must not take it. The second is a window
			// for a wrong grant to show, not a bound on anything.
			select {
			case r := <-lastDone:
				t.Fatalf("the second waiter got %v while the holder held the lock", r.err)
			case <-time.After(time.Second):
			}
			if err := held.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-lastDone:
				if r.err != nil {
					t.Fatalf("the second waiter after the release: %v", r.err)
				}
				if err := r.lease.Release(context.Background()); err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the second waiter was not granted the lock after the holder released")
			}
		})
	}
}

// A client that gives up, or finds the lock held, must leave no node behind:
// a leftover would stand in line and block everyone behind it while its
// session lives.
func TestGivingUpLeavesNoNode(t *testing.T) {
	addr := server(t)
	obs := observer(t, addr)
	tests := []struct {
		name string
		try  func(l impls.Locker, key string) error
		want error
	}{
		{"acquire past its deadline", func(l impls.Locker, key string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := l.Acquire(ctx, key)
			return err
		}, context.DeadlineExceeded},
		{"acquire cancelled", func(l impls.Locker, key string) error {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			_, err := l.Acquire(ctx, key)
			return err
		}, context.Canceled},
		{"try-acquire of a held lock", func(l impls.Locker, key string) error {
			_, err := l.TryAcquire(context.Background(), key)
			return err
		}, impls.ErrHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := freshKey()
			holder, other := newLocker(t, addr, time.Second), newLocker(t, addr, time.Second)
			lease := acquire(t, holder, key)
			if err := tt.try(other, key); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			// The other client's session lives on, so only a delete could
			// have removed its node.
			if c := children(t, obs, key); len(c) != 1 || zklock.Root+"/"+key+"/"+c[0] != nodeOf(lease) {
				t.Fatalf("children %v, want only the holder's %s", c, nodeOf(lease))
			}
			if err := lease.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The token is the lock directory's creation zxid plus the holder's
// sequence number, as any other client can read them, below the node's own
// czxid, and it grows with every grant, whoever gets it, also when the
// directory is deleted between grants and made again (its sequence
// restarts at 0).
func TestTokenIsTheDirectorysCzxidPlusTheSequence(t *testing.T) {
	addr := server(t)
	obs := observer(t, addr)
	key := freshKey()
	a, b := newLocker(t, addr, time.Second), newLocker(t, addr, time.Second)
	var last uint64
	for i, l := range []*zklock.Locker{a, a, b, nil, a, b, nil, b} {
		if l == nil {
			// Between grants the directory is empty: delete it, as an
			// operator tidying up would.
			if err := obs.Delete(zklock.Root+"/"+key, -1); err != nil {
				t.Fatalf("delete the lock directory: %v", err)
			}
			continue
		}
		lease := acquire(t, l, key)
		tok, ok := lease.Token()
		_, stat, err := obs.Get(nodeOf(lease))
		if err != nil {
			t.Fatal(err)
		}
		_, dirStat, err := obs.Get(zklock.Root + "/" + key)
		if err != nil {
			t.Fatal(err)
		}
		seq, _ := zklock.SeqOf(nodeOf(lease))
		if want := uint64(dirStat.Czxid + seq); !ok || tok != want {
			t.Fatalf("grant %d: token %d (%v), directory's czxid %d + sequence %d = %d", i, tok, ok, dirStat.Czxid, seq, want)
		}
		if tok >= uint64(stat.Czxid) {
			t.Fatalf("grant %d: token %d not below the node's czxid %d", i, tok, stat.Czxid)
		}
		if tok <= last {
			t.Fatalf("grant %d: token %d not above %d", i, tok, last)
		}
		last = tok
		if err := lease.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// proxy stands between one client and the server so a test can cut the
// client's connection, or lose the server's replies, without touching the
// server.
type proxy struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	cut   bool // refuse new connections
	pairs map[*pair]struct{}
}

type pair struct {
	client, server net.Conn
	dropReplies    atomic.Bool
}

func newProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream, pairs: map[*pair]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Reset()
	})
	return p
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		pr := &pair{client: c, server: s}
		p.mu.Lock()
		p.pairs[pr] = struct{}{}
		p.mu.Unlock()
		go func() {
			io.Copy(s, c)
			s.Close()
			c.Close()
		}()
		go func() {
			buf := make([]byte, 32*1024)
			for {
				n, err := s.Read(buf)
				if n > 0 && !pr.dropReplies.Load() {
					if _, werr := c.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			s.Close()
			c.Close()
		}()
	}
}

// Reset closes every open connection; new ones go through.
func (p *proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.pairs {
		pr.client.Close()
		pr.server.Close()
	}
	clear(p.pairs)
}

// Cut closes every connection and refuses new ones until Heal.
func (p *proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
	p.Reset()
}

func (p *proxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// LoseReplies makes the open connections deliver requests but drop every
// reply, so the client's requests take effect without its knowing.
func (p *proxy) LoseReplies() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.pairs {
		pr.dropReplies.Store(true)
	}
}

func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// A holder must hear that its lock may be gone as soon as its client does:
// when the connection drops (the session may expire before it is back) and,
// a fortiori, when the session ends.
func TestLostClosesWhenTheSessionMayBeGone(t *testing.T) {
	addr := server(t)
	tests := []struct {
		name string
		// ttl is the holder's session timeout; the server allows up to 20
		// ticks (2s).
		ttl   time.Duration
		fault func(p *proxy, holder *zklock.Locker)
		// survives: the session outlives the fault, so the node is still
		// the holder's; otherwise the server expires it and the next
		// client gets the lock.
		survives bool
	}{
		{"connection reset, session resumes", 2 * time.Second, func(p *proxy, _ *zklock.Locker) {
			p.Reset()
		}, true},
		{"cut past the session timeout", time.Second, func(p *proxy, _ *zklock.Locker) {
			p.Cut()
		}, false},
		{"client closed", time.Second, func(_ *proxy, holder *zklock.Locker) {
			holder.Close()
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := freshKey()
			p := newProxy(t, addr)
			holder := newLocker(t, p.Addr(), tt.ttl)
			other := newLocker(t, addr, time.Second)
			lease := acquire(t, holder, key)
			if closedWithin(lease.Lost(), 0) {
				t.Fatal("Lost closed before any fault")
			}
			tt.fault(p, holder)
			if !closedWithin(lease.Lost(), 5*time.Second) {
				t.Fatal("Lost still open 5s after the fault")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tt.survives {
				if _, err := other.TryAcquire(ctx, key); !errors.Is(err, impls.ErrHeld) {
					t.Fatalf("another client during the reconnect: %v, want ErrHeld (the session lives)", err)
				}
				if err := lease.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
					t.Fatalf("refresh of a lease reported lost: %v, want ErrNotHeld", err)
				}
				// The node was still ours: releasing it frees the lock.
				if err := lease.Release(ctx); err != nil {
					t.Fatalf("release after the session resumed: %v", err)
				}
				next, err := other.TryAcquire(ctx, key)
				if err != nil {
					t.Fatalf("another client after the release: %v", err)
				}
				next.Release(ctx)
				return
			}
			// The server expires the session and deletes its node, which
			// wakes the next client.
			next, err := other.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("another client after the holder's session ended: %v", err)
			}
			if a, b := mustToken(lease), mustToken(next); b <= a {
				t.Fatalf("next grant's token %d not above the lost one's %d", b, a)
			}
			p.Heal()
			if err := lease.Refresh(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("refresh after the session ended: %v, want ErrNotHeld", err)
			}
			if err := lease.Release(ctx); !errors.Is(err, impls.ErrNotHeld) {
				t.Fatalf("release after the session ended: %v, want ErrNotHeld", err)
			}
			if err := next.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// result is an acquire's outcome, handed over from a goroutine.
type result struct {
	lease impls.Lease
	err   error
}

func mustToken(l impls.Lease) uint64 {
	tok, _ := l.Token()
	return tok
}

// A create whose reply is lost may still have made the node. The client
// finds it again by the GUID in its name once the session is back, instead
// of reporting an unknown outcome or leaving a node that holds the lock for
// nobody.
func TestLostCreateReplyIsFoundByGUID(t *testing.T) {
	addr := server(t)
	obs := observer(t, addr)
	key := freshKey()
	p := newProxy(t, addr)
	l := newLocker(t, p.Addr(), 2*time.Second)
	// Make the lock's parents first, so the create is the one lost reply.
	warm := acquire(t, l, key)
	if err := warm.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.LoseReplies()
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lease, err := l.TryAcquire(ctx, key)
		done <- result{lease, err}
	}()
	var made []string
	eventually(t, "the create reached the server", func() bool {
		made = children(t, obs, key)
		return len(made) == 1
	})
	// Only now break the connection, well within the session timeout.
	p.Reset()
	r := <-done
	if r.err != nil {
		t.Fatalf("try-acquire whose create reply was lost: %v, want the lease (the node is ours)", r.err)
	}
	if got := nodeOf(r.lease); got != zklock.Root+"/"+key+"/"+made[0] {
		t.Fatalf("lease on %s, but the node made is %s", got, made[0])
	}
	if err := r.lease.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if err := r.lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := children(t, obs, key); len(c) != 0 {
		t.Fatalf("nodes left: %v", c)
	}
}

// Our nodes share the path with go-zookeeper's own zk.Lock (and so with
// Curator, whose names it copies): each side waits for the other.
func TestSharesThePathWithGoZookeepersLock(t *testing.T) {
	addr := server(t)
	key := freshKey()
	ours := newLocker(t, addr, time.Second)
	theirs := zk.NewLock(observer(t, addr), zklock.Root+"/"+key, zk.WorldACL(zk.PermAll))
	if err := theirs.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := ours.TryAcquire(context.Background(), key); !errors.Is(err, impls.ErrHeld) {
		t.Fatalf("try-acquire while zk.Lock holds: %v, want ErrHeld", err)
	}
	got := make(chan result, 1)
	go func() {
		lease, err := ours.Acquire(context.Background(), key)
		got <- result{lease, err}
	}()
	select {
	case <-got:
		t.Fatal("acquired while zk.Lock holds")
	case <-time.After(300 * time.Millisecond):
	}
	if err := theirs.Unlock(); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("acquire after zk.Lock's unlock: %v", r.err)
	}
	lease := r.lease
	theirsDone := make(chan error, 1)
	go func() { theirsDone <- theirs.Lock() }()
	select {
	case err := <-theirsDone:
		t.Fatalf("zk.Lock got the lock while we hold it (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-theirsDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("zk.Lock not granted after our release")
	}
	if err := theirs.Unlock(); err != nil {
		t.Fatal(err)
	}
}

// Only the sequence suffix orders contenders, whatever client named them.
func TestSeqOf(t *testing.T) {
	tests := []struct {
		child string
		seq   int64
		ok    bool
	}{
		{"_c_0f3a9c6e2b1d4e5f8a7b6c5d4e3f2a1b-lock-0000000042", 42, true}, // ours, Curator, go-zookeeper
		{"lock-0000000007", 7, true},                                      // unprotected
		{"6b1a2c3d4e5f__lock__0000000100", 100, true},                     // kazoo
		{"_c_ffffffffffffffffffffffffffffffff-lock-0000000001", 1, true},  // a GUID full of digits-like hex must not matter
		{"config", 0, false},
		{"lock-abc", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.child, func(t *testing.T) {
			seq, ok := zklock.SeqOf(tt.child)
			if seq != tt.seq || ok != tt.ok {
				t.Fatalf("SeqOf(%q) = %d, %v; want %d, %v", tt.child, seq, ok, tt.seq, tt.ok)
			}
		})
	}
}
