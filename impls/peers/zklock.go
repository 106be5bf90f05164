package peers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const zkName = "peer-zk-lock"

// ZKLockRoot is the parent of every peer-zk-lock lock node; the lab's own
// ZooKeeper lock uses another, so the two never share a queue.
const ZKLockRoot = "/locklab/peer-locks/"

func init() {
	impls.Register(impls.Spec{
		Name: zkName,
		Summary: "go-zookeeper/zk " + zkVer + " zk.Lock recipe: protected ephemeral sequential node, " +
			"lowest holds, each waiter watches its predecessor; held while the session lives",
		Peer: true,
		// Renewal: the client's pings keep the session, and so the lock,
		// alive for as long as the holder's process runs. No LostNotify:
		// the adapter closes Lost on the session's expiry event, which the
		// library reports only once it reconnects to a server that says
		// so; a holder cut off from the ensemble hears nothing while
		// another client takes the lock (conformance's LostNotify probe).
		Caps:       impls.Capabilities{Renewal: true, NoPolling: true, Expiry: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.ZooKeeper},
		RoundTrips: impls.RoundTrips{N: 3, Note: "create protected ephemeral sequential, getChildren, delete"},
		Footprint:  impls.Footprint{ZKDir: "/locklab/peer-locks/K", ZKChild: impls.ProtectedSequentialChild},
		Page:       "docs/lessons/09-zookeeper-session-expiry.md",
		Source:     "impls/peers/zklock.go",
		New:        func(cfg impls.Config) (impls.Locker, error) { return NewZKLock(cfg) },
	})
}

// ZKLock adapts go-zookeeper's own zk.Lock recipe. One ZKLock is one
// ZooKeeper session, whose timeout is the lab's TTL: a holder that crashes
// loses its lock when the server expires the session.
type ZKLock struct {
	conn *zk.Conn
	// waits counts the goroutines running zk.Lock, which Close waits for.
	waits sync.WaitGroup

	mu sync.Mutex
	// lost is closed when the current session expires (or the client
	// closes); every lease taken while it was current shares it.
	lost   chan struct{}
	closed bool
}

// NewZKLock opens the session. The library connects in the background;
// the first request waits for it.
func NewZKLock(cfg impls.Config) (*ZKLock, error) {
	if len(cfg.Addrs(topology.ZooKeeper)) == 0 {
		return nil, fmt.Errorf("%s: no ZooKeeper address configured", zkName)
	}
	l := &ZKLock{lost: make(chan struct{})}
	// The callback, unlike the event channel, sees every event: the library
	// drops events when nobody reads the channel.
	conn, _, err := zk.Connect(cfg.Addrs(topology.ZooKeeper), cfg.TTL, zk.WithLogInfo(false), zk.WithEventCallback(l.onEvent))
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", zkName, err)
	}
	l.conn = conn
	return l, nil
}

// onEvent runs on the library's connection goroutine. The client learns that
// its session expired only when it reconnects and the server says so; while
// it is cut off it cannot tell, and its leases' Lost stays open although the
// server may already have expired the session and granted the lock again.
func (l *ZKLock) onEvent(ev zk.Event) {
	if ev.Type == zk.EventSession && ev.State == zk.StateExpired {
		l.loseSession()
	}
}

// loseSession closes the current Lost channel; later leases, on the new
// session the library opens, get a fresh one.
func (l *ZKLock) loseSession() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return // Close already closed it for good
	}
	close(l.lost)
	l.lost = make(chan struct{})
}

func (l *ZKLock) currentLost() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func lockPath(key string) string { return ZKLockRoot + key }

// Acquire is zk.Lock, which blocks without a context. It runs in a goroutine.
// If ctx ends first, Acquire returns at once, but the recipe cannot be told to
// stop: its node stays in the queue until it reaches the head. The goroutine
// then finds itself holding the lock and unlocks it at once, so nothing is
// left behind, but a waiter that gave up still takes one brief turn; a
// TryAcquire in that window sees the lock held.
func (l *ZKLock) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.lock(ctx, key)
}

// TryAcquire is not offered by the recipe. We list the lock's queue and
// answer ErrHeld if anyone is in it; otherwise we run the recipe unchanged.
// The two steps are not atomic: a client that queues between them is served
// first, and this TryAcquire then waits behind it like Acquire does (until
// it is served or ctx ends) instead of answering ErrHeld at once. It never
// grants a lock the recipe would not.
func (l *ZKLock) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, impls.Fail(zkName, "acquire", err, nil)
	}
	// The library's requests take no context; a read can be left behind
	// safely when ctx ends first.
	var children []string
	err := wait(ctx, func() (err error) {
		children, _, err = l.conn.Children(lockPath(key))
		return err
	})
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, impls.Fail(zkName, "acquire", ctx.Err(), nil)
	case errors.Is(err, zk.ErrNoNode):
		// Never locked yet: the recipe creates the parent.
	case err != nil:
		return nil, zkFail(ctx, "acquire", err, false)
	case len(children) > 0:
		return nil, impls.Fail(zkName, "acquire", impls.ErrHeld, nil)
	}
	return l.lock(ctx, key)
}

func (l *ZKLock) lock(ctx context.Context, key string) (impls.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, impls.Fail(zkName, "acquire", err, nil)
	}
	lk := zk.NewLock(l.conn, lockPath(key), zk.WorldACL(zk.PermAll))
	// Taken before the recipe starts, so a session that expires at any point
	// after it marks the lease lost.
	lost := l.currentLost()
	done := make(chan error, 1)
	l.waits.Add(1)
	go func() {
		defer l.waits.Done()
		done <- lk.Lock()
	}()
	select {
	case err := <-done:
		if err != nil {
			return nil, lockFail(ctx, err)
		}
		return &zkLease{l: l, key: key, lock: lk, lost: lost}, nil
	case <-ctx.Done():
		l.waits.Add(1)
		go func() {
			defer l.waits.Done()
			if <-done == nil {
				// Our turn came after the caller left: pass it on.
				_ = lk.Unlock()
			}
		}()
		return nil, impls.Fail(zkName, "acquire", ctx.Err(), nil)
	}
}

// wait runs a read of the library's, which cannot be cancelled, and returns
// ctx's error if ctx ends first.
func wait(ctx context.Context, read func() error) error {
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockFail maps a failed zk.Lock. The recipe is several requests, and when
// one after its create fails (the connection drops while it reads the queue
// or watches its predecessor) it returns without deleting its node: with the
// session alive, that node stays queued and, once at the head, holds the lock
// for nobody until the session ends. Which request failed is not exposed, so
// a connection failure is ErrUnknown. A session that expired or closed took
// its nodes with it.
func lockFail(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
		return impls.Fail(zkName, "acquire", impls.ErrBackend, err)
	case errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrConnectionClosed):
		return impls.Fail(zkName, "acquire", impls.ErrUnknown, err)
	}
	return zkFail(ctx, "acquire", err, true)
}

// zkFail maps the library's errors. It has no request timeouts of its own:
// a request fails when the connection is lost (ErrConnectionClosed, after
// which a write may have been applied), when no server could be reached to
// send it (ErrNoServer), or when the session is gone, taking its ephemeral
// nodes with it.
func zkFail(ctx context.Context, op string, err error, mutating bool) error {
	switch {
	case errors.Is(err, zk.ErrNoServer):
		return impls.Fail(zkName, op, impls.ErrBackend, err)
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrClosing):
		if mutating {
			return impls.Fail(zkName, op, impls.ErrUnknown, err)
		}
		return impls.Fail(zkName, op, impls.ErrBackend, err)
	case errors.Is(err, zk.ErrSessionExpired):
		if op == "acquire" {
			return impls.Fail(zkName, op, impls.ErrBackend, err)
		}
		return impls.Fail(zkName, op, impls.ErrNotHeld, err)
	}
	return impls.Classify(ctx, zkName, op, err, mutating)
}

// Close ends the session, which deletes its lock nodes; the recipes still
// waiting then fail with ErrClosing and their goroutines end.
func (l *ZKLock) Close() error {
	l.conn.Close()
	l.waits.Wait()
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.lost)
	}
	l.mu.Unlock()
	return nil
}

type zkLease struct {
	l    *ZKLock
	key  string
	lost chan struct{}

	mu   sync.Mutex
	lock *zk.Lock
	done bool
}

func (s *zkLease) Key() string { return s.key }

// Token: the recipe keeps its node's path (and so its sequence number and
// czxid) to itself, so there is no fencing token to offer.
func (s *zkLease) Token() (uint64, bool) { return 0, false }
func (s *zkLease) Lost() <-chan struct{} { return s.lost }

// Refresh has nothing to send: the session's pings are what keep the lock.
// It says whether the session the lock was taken in still stands, as far as
// the client knows.
func (s *zkLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return impls.Fail(zkName, "refresh", impls.ErrNotHeld, nil)
	}
	select {
	case <-s.lost:
		return impls.Fail(zkName, "refresh", impls.ErrNotHeld, zk.ErrSessionExpired)
	default:
	}
	if st := s.l.conn.State(); st != zk.StateHasSession {
		return impls.Fail(zkName, "refresh", impls.ErrBackend, fmt.Errorf("session state %v", st))
	}
	return nil
}

// Release is Unlock: delete the node. A second release gets ErrNotLocked from
// the library; a node the server already removed (session expired) gives
// ErrNoNode. Like every request of the library's, the Delete takes no
// context: it is bounded by the library's receive timeout (2/3 of the TTL).
func (s *zkLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.lost:
		// The server deleted the node with the expired session; while the
		// library opens a new session a Delete could only fail.
		s.done = true
		return impls.Fail(zkName, "release", impls.ErrNotHeld, zk.ErrSessionExpired)
	default:
	}
	err := s.lock.Unlock()
	switch {
	case err == nil:
		s.done = true
		return nil
	case errors.Is(err, zk.ErrNotLocked), errors.Is(err, zk.ErrNoNode):
		s.done = true
		return impls.Fail(zkName, "release", impls.ErrNotHeld, err)
	}
	return zkFail(ctx, "release", err, true)
}
