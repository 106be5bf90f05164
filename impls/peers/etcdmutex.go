package peers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/etcdclient"
	"github.com/locklab/locklab/topology"
)

const (
	etcdMutexName = "peer-etcd-mutex"
	etcdModule    = "go.etcd.io/etcd/client/v3"
	etcdVer       = "v3.7.3"
)

// EtcdMutexRoot is the prefix of every peer-etcd-mutex lock; the lab's own
// etcd lock uses another, so the two never share a line.
const EtcdMutexRoot = "locklab/peer-etcd-mutex/"

func init() {
	Modules[etcdModule] = etcdVer
	impls.Register(impls.Spec{
		Name: etcdMutexName,
		Summary: "etcd client " + etcdVer + " concurrency.Mutex on a concurrency.Session whose TTL is the lab's: " +
			"one key per session under the lock's prefix, the oldest holds, each waiter watches the one before it; " +
			"token = the revision of the response that granted it; Lost when the session's keep-alive ends",
		Peer: true,
		// Renewal: the session's keep-alives renew its lease while the
		// process runs; Expiry: a silent holder's lease runs out on the
		// cluster. LostNotify: the session's Done, which the library closes
		// when its keep-alive channel ends; the library checks for a missed
		// renewal once a second, so the notice comes up to a second after
		// the lease's TTL (conformance's probe says whether that is in
		// time). NoPolling: waiters watch.
		Caps:       impls.Capabilities{Fencing: true, Renewal: true, LostNotify: true, NoPolling: true, Expiry: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.Etcd},
		RoundTrips: impls.RoundTrips{N: 3, Note: "Mutex's transaction (put when absent, read the head), the adapter's ownership check (a transaction with a read), Unlock's delete"},
		Page:       "docs/lessons/09-zookeeper-session-expiry.md",
		Source:     "impls/peers/etcdmutex.go",
		New:        func(cfg impls.Config) (impls.Locker, error) { return NewEtcdMutex(cfg) },
	})
}

// EtcdMutex adapts etcd's own concurrency.Mutex. One EtcdMutex is one
// client and one Session at a time (the lease its keys are attached to); a
// session that ends is replaced for the next acquire, as a user of the
// library must do by hand (a Mutex on an expired session can never lock).
type EtcdMutex struct {
	c   *clientv3.Client
	ttl int

	mu   sync.Mutex
	sess *concurrency.Session
	// mine are the keys this client holds: the library keys a lock by
	// session, so a second Lock of a key its own session holds is granted
	// at once, and the first Unlock frees both. The adapter makes such an
	// acquire wait for (or a try refuse) the client's own holder instead.
	mine   map[string]chan struct{}
	closed bool
}

// NewEtcdMutex connects to every member and opens the first session.
func NewEtcdMutex(cfg impls.Config) (*EtcdMutex, error) {
	addrs := cfg.Addrs(topology.Etcd)
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s: no etcd address configured", etcdMutexName)
	}
	ttl := cfg.TTL
	if ttl <= 0 {
		ttl = 60 * time.Second // the library's default session TTL
	}
	c, err := clientv3.New(etcdclient.Config(addrs, max(ttl, 2*time.Second)))
	if err != nil {
		return nil, impls.Fail(etcdMutexName, "connect", impls.ErrBackend, err)
	}
	m := &EtcdMutex{c: c, ttl: max(1, int(math.Ceil(ttl.Seconds()))), mine: map[string]chan struct{}{}}
	ctx, cancel := context.WithTimeout(context.Background(), max(2*ttl, 5*time.Second))
	defer cancel()
	if _, err := m.session(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return m, nil
}

// session returns the live session, opening a new one when the last ended.
func (m *EtcdMutex) session(ctx context.Context) (*concurrency.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, impls.Fail(etcdMutexName, "acquire", impls.ErrBackend, errors.New("the client was closed"))
	}
	if m.sess != nil {
		select {
		case <-m.sess.Done():
		default:
			return m.sess, nil
		}
	}
	s, err := concurrency.NewSession(m.c, concurrency.WithTTL(m.ttl), concurrency.WithContext(context.Background()))
	if err != nil {
		return nil, etcdFail(ctx, "acquire", err, false)
	}
	m.sess = s
	return s, nil
}

// Close closes the session, which revokes its lease (and so deletes every
// key the client held or queued), then the client.
func (m *EtcdMutex) Close() error {
	m.mu.Lock()
	m.closed = true
	s := m.sess
	m.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
	return m.c.Close()
}

func (m *EtcdMutex) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return m.lock(ctx, key, true)
}

// TryAcquire is the library's TryLock: one transaction, and the key
// deleted again when another session holds the lock.
func (m *EtcdMutex) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return m.lock(ctx, key, false)
}

// own marks key as held by this client, waiting (or, for a try, refusing)
// while it already is.
func (m *EtcdMutex) own(ctx context.Context, key string, wait bool) (chan struct{}, error) {
	for {
		m.mu.Lock()
		held, ok := m.mine[key]
		if !ok {
			ch := make(chan struct{})
			m.mine[key] = ch
			m.mu.Unlock()
			return ch, nil
		}
		m.mu.Unlock()
		if !wait {
			return nil, impls.Fail(etcdMutexName, "acquire", impls.ErrHeld, nil)
		}
		select {
		case <-held:
		case <-ctx.Done():
			return nil, impls.Fail(etcdMutexName, "acquire", ctx.Err(), nil)
		}
	}
}

func (m *EtcdMutex) disown(key string, ch chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mine[key] == ch {
		delete(m.mine, key)
		close(ch)
	}
}

func (m *EtcdMutex) lock(ctx context.Context, key string, wait bool) (impls.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, impls.Fail(etcdMutexName, "acquire", err, nil)
	}
	mine, err := m.own(ctx, key, wait)
	if err != nil {
		return nil, err
	}
	s, err := m.session(ctx)
	if err != nil {
		m.disown(key, mine)
		return nil, err
	}
	mu := concurrency.NewMutex(s, EtcdMutexRoot+key)
	if wait {
		err = mu.Lock(ctx)
	} else {
		err = mu.TryLock(ctx)
	}
	if err != nil {
		m.disown(key, mine)
		if errors.Is(err, concurrency.ErrLocked) {
			return nil, impls.Fail(etcdMutexName, "acquire", impls.ErrHeld, err)
		}
		if errors.Is(err, concurrency.ErrSessionExpired) {
			// Lock returns this once its key was in line and the
			// session ended (etcd #19597: only when the key ahead is
			// gone): it lost its place, having met the lock.
			return nil, impls.Fail(etcdMutexName, "acquire", impls.ErrNotHeld, err)
		}
		// Lock deletes its key when its wait fails, but not when its
		// first transaction's reply is lost: then the key may stand in
		// line until the session ends. Such an outcome is unknown.
		return nil, etcdFail(ctx, "acquire", err, true)
	}
	return &etcdMutexLease{m: m, key: key, mu: mu, s: s, mine: mine, token: uint64(mu.Header().Revision)}, nil
}

// etcdFail maps the client's errors to the lab's kinds.
func etcdFail(ctx context.Context, op string, err error, mutating bool) error {
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return impls.Fail(etcdMutexName, op, impls.ErrNotHeld, err)
	case errors.Is(err, rpctypes.ErrNoLeader):
		return impls.Fail(etcdMutexName, op, impls.ErrBackend, err)
	}
	if mutating && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return impls.Fail(etcdMutexName, op, impls.ErrUnknown, err)
	}
	k := impls.Classify(ctx, etcdMutexName, op, err, mutating)
	var e *impls.Error
	if mutating && errors.As(k, &e) && e.Kind == impls.ErrBackend {
		// gRPC's errors are not net errors: a write whose connection
		// failed may have been applied.
		return impls.Fail(etcdMutexName, op, impls.ErrUnknown, err)
	}
	return k
}

type etcdMutexLease struct {
	m     *EtcdMutex
	key   string
	mu    *concurrency.Mutex
	s     *concurrency.Session
	mine  chan struct{}
	token uint64

	lk   sync.Mutex
	done bool
}

func (l *etcdMutexLease) Key() string { return l.key }

// Token is the revision of the response that granted the lock (the
// Mutex's Header): the transaction that created the key when the lock was
// free, or the read after the wait otherwise. Either comes after every
// earlier holder's key was deleted, and revisions only grow, so tokens grow
// with grants. The key's own create revision, which etcd documents as the
// fence, is kept private by the library.
func (l *etcdMutexLease) Token() (uint64, bool) { return l.token, true }
func (l *etcdMutexLease) Lost() <-chan struct{} { return l.s.Done() }

// Refresh has nothing to send: the session's keep-alives renew the lease.
// It asks whether the key still stands with the revision it was created
// with (the library's IsOwner comparison).
func (l *etcdMutexLease) Refresh(ctx context.Context) error {
	l.lk.Lock()
	defer l.lk.Unlock()
	if l.done {
		return impls.Fail(etcdMutexName, "refresh", impls.ErrNotHeld, nil)
	}
	select {
	case <-l.s.Done():
		return impls.Fail(etcdMutexName, "refresh", impls.ErrNotHeld, concurrency.ErrSessionExpired)
	default:
	}
	resp, err := l.owner(ctx)
	if err != nil {
		return etcdFail(ctx, "refresh", err, false)
	}
	if !resp.Succeeded {
		return impls.Fail(etcdMutexName, "refresh", impls.ErrNotHeld, fmt.Errorf("key %s is gone", l.mu.Key()))
	}
	return nil
}

// owner asks the cluster whether the key still stands as granted: the
// library's IsOwner comparison, in a transaction that also reads the key.
// The read is what makes it linearizable: etcd 3.4 serves a transaction
// whose branches hold no operation as serializable (its check that every
// operation is a serializable read holds vacuously), from whichever member
// answers, and in the lab a follower then said "not the owner" of a key
// created a moment before through another member (TestEtcdCompareOnlyTxnIsStale).
func (l *etcdMutexLease) owner(ctx context.Context) (*clientv3.TxnResponse, error) {
	return l.m.c.Txn(ctx).If(l.mu.IsOwner()).Then(clientv3.OpGet(l.mu.Key(), clientv3.WithKeysOnly())).Commit()
}

// Release is Unlock: delete the session's key, unconditionally (the
// library compares nothing). A key already gone (its session expired) is
// deleted all the same without an error, so the adapter asks first whether
// the key still stands as granted, which Unlock itself does not.
func (l *etcdMutexLease) Release(ctx context.Context) error {
	l.lk.Lock()
	defer l.lk.Unlock()
	if l.done {
		return impls.Fail(etcdMutexName, "release", impls.ErrNotHeld, nil)
	}
	l.done = true
	defer l.m.disown(l.key, l.mine)
	resp, err := l.owner(ctx)
	if err != nil {
		return etcdFail(ctx, "release", err, false)
	}
	if !resp.Succeeded {
		return impls.Fail(etcdMutexName, "release", impls.ErrNotHeld, fmt.Errorf("key %s is gone (session expired?)", l.mu.Key()))
	}
	if err := l.mu.Unlock(ctx); err != nil {
		return etcdFail(ctx, "release", err, true)
	}
	return nil
}
