package zklock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const name = "zookeeper"

func init() {
	impls.Register(impls.Spec{
		Name: name,
		Summary: "ephemeral sequential child per contender, the lowest holds, each waiter watches only its predecessor; " +
			"fencing token = the lock directory's czxid + the child's sequence number; Lost on disconnect or session expiry",
		// Renewal: the client's session pings keep the ephemeral node alive
		// while the holder's process lives, and a crashed holder's node goes
		// when its session expires (Expiry).
		Caps:       impls.Capabilities{Fencing: true, Renewal: true, LostNotify: true, NoPolling: true, Expiry: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.ZooKeeper},
		RoundTrips: impls.RoundTrips{N: 3, Note: "create ephemeral sequential, getChildren (its directory's czxid + the sequence: the fencing token), delete"},
		Footprint:  impls.Footprint{ZKDir: "/locklab/locks/K", ZKChild: impls.ProtectedSequentialChild},
		Page:       "docs/lessons/09-zookeeper-session-expiry.md",
		Source:     "impls/zklock/zklock.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return New(cfg)
		},
	})
}

// Root is the persistent parent of every lock; a lock on key lives in
// Root/<key>, with one child per contender.
const Root = "/locklab/locks"

// Children are named the way Apache Curator's InterProcessMutex and
// go-zookeeper's zk.Lock name theirs, "_c_<guid>-lock-<seq>" (the "protected"
// form), so that clients of either can contend on the same path with us. The
// GUID is what lets a client find its own node after a create whose reply was
// lost; the unprotected "lock-<seq>" form could not be told apart from
// another client's.
const (
	protectedPrefix = "_c_"
	lockInfix       = "-lock-"
	// seqLen is the width of the counter ZooKeeper appends to a sequential
	// node's name (%010d).
	seqLen = 10
)

// sessionWait bounds how long New waits for the first session.
const sessionWait = 10 * time.Second

// Locker is one ZooKeeper session; every lock it takes is an ephemeral node
// of that session.
type Locker struct {
	conn *zk.Conn
	ttl  time.Duration
	acl  []zk.ACL

	mu sync.Mutex
	// held are the leases granted and not yet released or lost: the ones
	// whose Lost channels a session event must close.
	held map[*lease]struct{}
	// drops counts disconnections and expiries. A grant decided before a
	// drop that the holder has not heard of is only possibly held.
	drops uint64
	// expiries counts sessions that ended: every ephemeral node made before
	// one is gone.
	expiries uint64
	ready    chan struct{} // closed at the first session
	isReady  bool
	done     chan struct{} // closed by Close
	closed   bool
}

// New connects one session to cfg.Addrs(topology.ZooKeeper) with session timeout cfg.TTL and
// waits for it to be established.
func New(cfg impls.Config) (*Locker, error) {
	if len(cfg.Addrs(topology.ZooKeeper)) == 0 {
		return nil, impls.Fail(name, "connect", impls.ErrBackend, errors.New("no ZooKeeper address configured"))
	}
	ttl := cfg.TTL
	if ttl <= 0 {
		// The server clamps the timeout into [2, 20] ticks anyway.
		ttl = 10 * time.Second
	}
	l := &Locker{
		ttl:   ttl,
		acl:   zk.WorldACL(zk.PermAll),
		held:  map[*lease]struct{}{},
		ready: make(chan struct{}),
		done:  make(chan struct{}),
	}
	// The callback, unlike the event channel (which drops events when
	// nobody reads it), sees every session state change, in order.
	conn, _, err := zk.Connect(cfg.Addrs(topology.ZooKeeper), ttl,
		zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false), zk.WithEventCallback(l.onEvent))
	if err != nil {
		return nil, impls.Fail(name, "connect", impls.ErrBackend, err)
	}
	l.conn = conn
	t := time.NewTimer(sessionWait)
	defer t.Stop()
	select {
	case <-l.ready:
		return l, nil
	case <-t.C:
		conn.Close()
		return nil, impls.Fail(name, "connect", impls.ErrBackend,
			fmt.Errorf("no session with %v within %v", cfg.Addrs(topology.ZooKeeper), sessionWait))
	}
}

// onEvent runs on go-zookeeper's connection goroutine, so it must not block
// nor call back into the connection.
//
// A holder that lost its connection cannot tell a slow network from an
// expired session: the client notices silence after 2/3 of the session
// timeout, and the server may expire the session (and grant the lock to the
// next waiter) 1/3 of the timeout later. So a disconnection already closes
// Lost, as Curator's guidance treats SUSPENDED: the lock is no longer safely
// held, even if the session later reconnects and the node turns out to have
// survived.
func (l *Locker) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev.State {
	case zk.StateHasSession:
		if !l.isReady {
			l.isReady = true
			close(l.ready)
		}
	case zk.StateDisconnected, zk.StateExpired, zk.StateAuthFailed:
		l.drops++
		if ev.State == zk.StateExpired {
			l.expiries++
		}
		for s := range l.held {
			s.markLost()
		}
		clear(l.held)
	}
}

// SessionID is the id of the current session (0 while there is none).
func (l *Locker) SessionID() int64 { return l.conn.SessionID() }

// Close ends the session: the server deletes its ephemeral nodes at once, so
// every lock this client held or waited for is freed.
func (l *Locker) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	l.mu.Unlock()
	l.conn.Close()
	return nil
}

func (l *Locker) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.acquire(ctx, key, true)
}

func (l *Locker) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.acquire(ctx, key, false)
}

// lockDir is the lock's parent node. Escaping keeps a key with a slash from
// reaching into another lock's tree.
func lockDir(key string) string {
	seg := url.PathEscape(key)
	// "." and ".." are steps to ZooKeeper, not names (it refuses the path):
	// spell their dots escaped, which PathEscape never does, so no other
	// key can map to the same directory.
	if seg == "." || seg == ".." {
		seg = strings.ReplaceAll(seg, ".", "%2E")
	}
	return Root + "/" + seg
}

func (l *Locker) acquire(ctx context.Context, key string, wait bool) (impls.Lease, error) {
	op := "acquire"
	if !wait {
		op = "try-acquire"
	}
	dir := lockDir(key)
	guid, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(name, op, impls.ErrBackend, err)
	}
	expiries := l.expiryCount()
	node, err := l.create(ctx, op, dir, guid)
	if err != nil {
		return nil, err
	}
	path := dir + "/" + node
	// The session that made the node owns it. Read after the create, the id
	// is that session's unless one expired meanwhile (go-zookeeper zeroes
	// the id and reports the expiry before it sets a new one); then the
	// node is gone, or was made by the new session, and grant asks.
	owner := l.conn.SessionID()
	if l.expiryCount() != expiries {
		owner = 0
	}
	seq, _ := SeqOf(node)
	var token uint64
	for {
		drops := l.dropCount()
		children, dirStat, err := callCtx2(ctx, func() ([]string, *zk.Stat, error) {
			return l.conn.Children(dir)
		})
		if err != nil {
			l.abandon(dir, guid, path)
			return nil, l.classify(ctx, op, err, false)
		}
		pred, found := predecessor(children, node)
		if !found {
			// Our node went with our session: nothing of ours remains.
			return nil, impls.Fail(name, op, impls.ErrNotHeld, fmt.Errorf("lock node %s vanished while it stood in line (session expired?)", path))
		}
		// The directory in this listing holds our node, so it is the
		// incarnation our sequence number counts in.
		token = tokenOf(dirStat.Czxid, seq)
		if isLowest(pred) {
			return l.grant(ctx, op, key, dir, guid, path, token, owner, drops)
		}
		if !wait {
			l.abandon(dir, guid, path)
			return nil, impls.Fail(name, op, impls.ErrHeld, nil)
		}
		// A data watch fires when the node is deleted, like an exists watch,
		// but is not left behind on the server when the predecessor is
		// already gone (Curator watches with getData for the same reason).
		// Watching only the predecessor means a release wakes one waiter,
		// not the herd.
		ch, err := callCtx(ctx, func() (<-chan zk.Event, error) {
			_, _, ch, err := l.conn.GetW(dir + "/" + pred)
			return ch, err
		}, nil)
		if errors.Is(err, zk.ErrNoNode) {
			continue // the predecessor left between the listing and the watch
		}
		if err != nil {
			l.abandon(dir, guid, path)
			return nil, l.classify(ctx, op, err, false)
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				// The watch was dropped: the session expired or we closed.
				l.abandon(dir, guid, path)
				return nil, impls.Fail(name, op, impls.ErrBackend, ev.Err)
			}
			// The deletion is news from the past: a waiter frozen (SIGSTOP,
			// a long GC) while it waited reads the notification only when it
			// thaws, by which time its own session may have expired, its
			// node gone and the next waiter granted. So the event only says
			// "look again": the listing goes out on the session, which
			// fails if the session is over. Taking the lock on the event
			// alone (which saves one request per hand-off, and which we did
			// for a while) let a thawed waiter hold beside the next one in
			// line, in two of three runs of queued-waiter-pause under CI
			// (kept as the grant-on-wake mutant).
			if ev.Type == zk.EventNodeDeleted && grantOnWake() {
				return l.grant(ctx, op, key, dir, guid, path, token, owner, drops)
			}
		case <-ctx.Done():
			l.abandon(dir, guid, path)
			return nil, impls.Fail(name, op, ctx.Err(), nil)
		}
	}
}

// grant turns our lowest node into a lease with the given fencing token
// (see Token). owner is the session that made the node, 0 when unknown:
// then, and only then, grant reads the node to learn it.
func (l *Locker) grant(ctx context.Context, op, key, dir, guid, path string, token uint64, owner int64, drops uint64) (impls.Lease, error) {
	if owner == 0 {
		stat, err := callCtx(ctx, func() (*zk.Stat, error) {
			ok, stat, err := l.conn.Exists(path)
			if err == nil && !ok {
				err = zk.ErrNoNode
			}
			return stat, err
		}, nil)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, impls.Fail(name, op, impls.ErrNotHeld, fmt.Errorf("lock node %s vanished while it stood in line (session expired?)", path))
		}
		if err != nil {
			l.abandon(dir, guid, path)
			return nil, l.classify(ctx, op, err, false)
		}
		owner = stat.EphemeralOwner
	}
	s := &lease{l: l, key: key, path: path, token: token, owner: owner, lost: make(chan struct{})}
	l.mu.Lock()
	if l.drops != drops || l.closed {
		// The connection dropped after we saw ourselves lowest: the caller
		// gets the lease, already marked possibly lost, like a holder that
		// was told at the drop.
		s.markLost()
	} else {
		l.held[s] = struct{}{}
	}
	l.mu.Unlock()
	return s, nil
}

// create makes our ephemeral sequential child and returns its name. Its
// outcome is ambiguous when the connection breaks after the request went
// out; then, as Curator does, we look for a child carrying our GUID once the
// session is back. If the context ends first the outcome stays unknown, and
// a background reaper deletes the node should it turn up.
func (l *Locker) create(ctx context.Context, op, dir, guid string) (string, error) {
	prefix := dir + "/" + protectedPrefix + guid + lockInfix
	expiries := l.expiryCount()
	for attempt := 0; ; attempt++ {
		path, err := callCtx(ctx, func() (string, error) {
			return l.conn.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, l.acl)
		}, func(path string, err error) {
			// The reply came after we gave up on it.
			if err == nil || errors.Is(err, zk.ErrConnectionClosed) {
				l.reap(dir, guid, expiries)
			}
		})
		switch {
		case err == nil:
			return path[len(dir)+1:], nil
		case isCtxErr(err):
			return "", impls.Fail(name, op, impls.ErrUnknown, err)
		case errors.Is(err, zk.ErrNoNode) && attempt < 3:
			if err := l.ensureDir(ctx, dir); err != nil {
				return "", l.classify(ctx, op, err, false)
			}
		case errors.Is(err, zk.ErrConnectionClosed) && attempt < 3:
			node, err := l.findGUID(ctx, dir, guid, expiries)
			if err != nil {
				if isCtxErr(err) {
					l.reapAsync(dir, guid, expiries)
					return "", impls.Fail(name, op, impls.ErrUnknown, err)
				}
				return "", l.classify(ctx, op, err, false)
			}
			if node != "" {
				return node, nil
			}
			// The create never applied: try again, with the same GUID.
		default:
			return "", l.classify(ctx, op, err, true)
		}
	}
}

// findGUID lists dir until a listing succeeds and returns our child's name,
// or "" if the create did not apply. A listing on the same session is
// ordered after the lost create, so it is the final word. An expired session
// took the node, if any, with it.
func (l *Locker) findGUID(ctx context.Context, dir, guid string, expiries uint64) (string, error) {
	for {
		if l.expiryCount() != expiries {
			return "", zk.ErrSessionExpired
		}
		children, err := callCtx(ctx, func() ([]string, error) {
			c, _, err := l.conn.Children(dir)
			return c, err
		}, nil)
		if err == nil {
			if l.expiryCount() != expiries {
				return "", zk.ErrSessionExpired
			}
			return withGUID(children, guid), nil
		}
		if isCtxErr(err) || !retryable(err) {
			return "", err
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return "", err
		}
	}
}

// ensureDir creates the lock's persistent parents.
func (l *Locker) ensureDir(ctx context.Context, dir string) error {
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		path := p
		_, err := callCtx(ctx, func() (string, error) {
			return l.conn.Create(path, nil, zk.FlagPersistent, l.acl)
		}, nil)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// abandon deletes a node we no longer want (a waiter that gives up, a try
// that found the lock held), so that it does not stand in line for nobody.
// The caller's context may be over, so the delete gets its own deadline;
// if that passes too, the reaper keeps at it in the background.
func (l *Locker) abandon(dir, guid, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cleanupTimeout())
	defer cancel()
	expiries := l.expiryCount()
	if err := l.deleteNode(ctx, path); err == nil || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrSessionExpired) {
		return
	}
	l.reapAsync(dir, guid, expiries)
}

func (l *Locker) cleanupTimeout() time.Duration {
	if l.ttl < time.Second {
		return time.Second
	}
	return l.ttl
}

func (l *Locker) reapAsync(dir, guid string, expiries uint64) {
	go l.reap(dir, guid, expiries)
}

// reap deletes our child with guid, whenever it can: until it is gone, the
// session that owned it expired, or the Locker is closed (which ends the
// session and so the node).
func (l *Locker) reap(dir, guid string, expiries uint64) {
	wait := 20 * time.Millisecond
	for {
		select {
		case <-l.done:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.cleanupTimeout())
		node, err := l.findGUID(ctx, dir, guid, expiries)
		if err == nil && node != "" {
			err = l.deleteNode(ctx, dir+"/"+node)
		}
		cancel()
		if err == nil || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrSessionExpired) {
			return
		}
		select {
		case <-l.done:
			return
		case <-time.After(wait):
		}
		if wait *= 2; wait > time.Second {
			wait = time.Second
		}
	}
}

// deleteNode deletes path whatever its version. A delete the client never
// sent (no server reachable) is retried while ctx allows.
func (l *Locker) deleteNode(ctx context.Context, path string) error {
	for {
		_, err := callCtx(ctx, func() (struct{}, error) {
			return struct{}{}, l.conn.Delete(path, -1)
		}, nil)
		if !errors.Is(err, zk.ErrNoServer) {
			return err
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

func (l *Locker) dropCount() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.drops
}

func (l *Locker) expiryCount() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expiries
}

func (l *Locker) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// classify maps go-zookeeper's errors to the lab's kinds. mutating says
// whether the request could have changed state on the server.
func (l *Locker) classify(ctx context.Context, op string, err error, mutating bool) error {
	var e *impls.Error
	switch {
	case errors.As(err, &e):
		return err
	case isCtxErr(err):
		if mutating {
			return impls.Fail(name, op, impls.ErrUnknown, err)
		}
		return impls.Fail(name, op, ctxKind(err), err)
	case errors.Is(err, zk.ErrNoServer):
		// flushed from the send queue: it never reached a server
		return impls.Fail(name, op, impls.ErrBackend, err)
	case errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrClosing):
		// Whatever the request did belonged to a session that is over, and
		// its ephemeral nodes with it.
		return impls.Fail(name, op, impls.ErrBackend, err)
	case errors.Is(err, zk.ErrConnectionClosed):
		if mutating && !l.isClosed() {
			// sent, then the connection broke before the reply
			return impls.Fail(name, op, impls.ErrUnknown, err)
		}
		return impls.Fail(name, op, impls.ErrBackend, err)
	}
	return impls.Classify(ctx, name, op, err, mutating)
}

// lease is one ephemeral node at the head of its lock's line.
type lease struct {
	l     *Locker
	key   string
	path  string
	token uint64
	owner int64 // the session that owns the node

	lostOnce sync.Once
	lost     chan struct{}

	mu       sync.Mutex
	released bool
}

func (s *lease) Key() string { return s.key }

// Token is the lock directory's creation zxid plus the node's sequence
// number. It grows with every grant, across deletions of the directory,
// and costs no request beyond the listing every acquire makes (the node's
// own czxid would: go-zookeeper v1.0.4 sends create, not create2, and
// drops the reply's zxid, so reading it took an exists per grant):
//   - within one directory, grants follow sequence order, and sequence
//     numbers follow creation order;
//   - a sequence number is the directory's child version when the node was
//     made: the count of children created and deleted before it, each a
//     transaction of its own after the directory's, and zxids grow by at
//     least one per transaction, so czxid(dir) + seq < czxid(node);
//   - a directory deleted and made again (possible only once empty) has a
//     czxid above every transaction on the old one, so above every token
//     granted under it, and the sequence restarting at 0 cannot go back.
//
// The bound is 2^31 sequential children per directory incarnation, after
// which ZooKeeper's counter wraps and every lock of this recipe breaks.
func (s *lease) Token() (uint64, bool) { return s.token, true }
func (s *lease) Lost() <-chan struct{} { return s.lost }
func (s *lease) String() string        { return s.key + "#" + strconv.FormatUint(s.token, 10) }

// Node is the lease's ephemeral node, for inspection.
func (s *lease) Node() string { return s.path }

func (s *lease) markLost() {
	if lossUnreported() {
		return
	}
	s.lostOnce.Do(func() { close(s.lost) })
}

func (s *lease) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// Refresh has no lease time to extend: the session's pings keep the node.
// It checks that the node is still ours, and refuses a lease whose holder
// was already told it was lost, so that Lost and Refresh never disagree.
func (s *lease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	released := s.released
	s.mu.Unlock()
	if released || s.isLost() {
		return impls.Fail(name, "refresh", impls.ErrNotHeld, nil)
	}
	stat, err := callCtx(ctx, func() (*zk.Stat, error) {
		ok, stat, err := s.l.conn.Exists(s.path)
		if err == nil && !ok {
			err = zk.ErrNoNode
		}
		return stat, err
	}, nil)
	switch {
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
		return impls.Fail(name, "refresh", impls.ErrNotHeld, err)
	case err != nil:
		return s.l.classify(ctx, "refresh", err, false)
	case stat.EphemeralOwner != s.owner:
		return impls.Fail(name, "refresh", impls.ErrNotHeld, fmt.Errorf("%s now belongs to session %#x", s.path, stat.EphemeralOwner))
	case s.isLost():
		// the connection dropped while we asked
		return impls.Fail(name, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

// Release deletes our node, which wakes the next waiter. If its outcome is
// unknown the reaper finishes the job, so the lock is not left stuck behind
// a node nobody will delete while this session lives.
func (s *lease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(name, "release", impls.ErrNotHeld, nil)
	}
	s.released = true
	s.l.mu.Lock()
	delete(s.l.held, s)
	closed := s.l.closed
	s.l.mu.Unlock()
	if closed {
		// Closing ended the session, and the server deleted its nodes.
		return impls.Fail(name, "release", impls.ErrNotHeld, errors.New("the client was closed"))
	}
	expiries := s.l.expiryCount()
	err := s.l.deleteNode(ctx, s.path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
		// the session expired and the node with it
		return impls.Fail(name, "release", impls.ErrNotHeld, err)
	}
	dir, node := s.path[:strings.LastIndex(s.path, "/")], s.path[strings.LastIndex(s.path, "/")+1:]
	s.l.reapAsync(dir, guidOf(node), expiries)
	return s.l.classify(ctx, "release", err, true)
}

// callCtx runs one go-zookeeper request, whose calls take no context, in its
// own goroutine, and returns at its reply or when ctx ends, whichever comes
// first. A reply that comes after that goes to late, if given.
func callCtx[T any](ctx context.Context, f func() (T, error), late func(T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
	}
	// A reply that is already here wins over the context.
	select {
	case r := <-ch:
		return r.v, r.err
	default:
	}
	if late != nil {
		go func() {
			r := <-ch
			late(r.v, r.err)
		}()
	}
	var zero T
	return zero, ctx.Err()
}

// callCtx2 is callCtx for a request with two results, whose late reply
// nobody needs (a read).
func callCtx2[A, B any](ctx context.Context, f func() (A, B, error)) (A, B, error) {
	type pair struct {
		a A
		b B
	}
	p, err := callCtx(ctx, func() (pair, error) {
		a, b, err := f()
		return pair{a, b}, err
	}, nil)
	return p.a, p.b, err
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func ctxKind(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// retryable errors mean the connection is down for now, not that the
// request is wrong.
func retryable(err error) bool {
	return errors.Is(err, zk.ErrNoServer) || errors.Is(err, zk.ErrConnectionClosed)
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// guidOf returns the GUID of a protected child's name ("" if it has none).
func guidOf(child string) string {
	if !strings.HasPrefix(child, protectedPrefix) {
		return ""
	}
	rest := child[len(protectedPrefix):]
	i := strings.Index(rest, "-")
	if i < 0 {
		return ""
	}
	return rest[:i]
}

func withGUID(children []string, guid string) string {
	for _, c := range children {
		if guidOf(c) == guid {
			return c
		}
	}
	return ""
}

// SeqOf returns the sequence number ZooKeeper appended to a contender's
// name. Only that suffix orders contenders: the GUID before it is random,
// and other clients' prefixes differ ("lock-" for go-zookeeper and Curator,
// "__lock__" for kazoo), but every sequential node ends in the same ten
// characters. A child without them is not a contender.
func SeqOf(child string) (int64, bool) {
	if len(child) < seqLen {
		return 0, false
	}
	n, err := strconv.ParseInt(child[len(child)-seqLen:], 10, 64)
	return n, err == nil
}

// predecessor returns the contender just ahead of own among children ("" if
// own is first) and whether own is among them at all.
func predecessor(children []string, own string) (string, bool) {
	mine, ok := SeqOf(own)
	if !ok {
		return "", false
	}
	pred, predSeq, found := "", int64(-1), false
	for _, c := range children {
		if c == own {
			found = true
			continue
		}
		if s, ok := SeqOf(c); ok && s < mine && s > predSeq {
			pred, predSeq = c, s
		}
	}
	if !found {
		return "", false
	}
	return pred, true
}
