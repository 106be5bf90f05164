// Package etcdlock is the lab's etcd lock: a lease kept alive by the
// client, one key per contender created in a transaction under the lock's
// prefix, the contender whose key was created first holds, each waiter
// watches the key created just before its own, and the fencing token is the
// holder's key's create revision.
package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/etcdclient"
	"github.com/locklab/locklab/topology"
)

const name = "etcd-lock"

func init() {
	impls.Register(impls.Spec{
		Name: name,
		Summary: "a lease kept alive by the client; one key per contender, created in a transaction when absent, " +
			"the oldest holds and each waiter watches the key just before its own; " +
			"fencing token = the holder's key's create revision; Lost when the lease is not renewed within its TTL",
		// Renewal: the client's keep-alives renew the lease while the
		// holder's process runs; Expiry: a silent holder's lease runs out on
		// the cluster's side and its key goes with it; LostNotify: the
		// client closes Lost once no keep-alive was answered for a TTL;
		// NoPolling: a waiter waits on a watch; Queued: each waits for the
		// key created just before its own, which a dead waiter's lease keeps
		// until it runs out.
		Caps:       impls.Capabilities{Fencing: true, Renewal: true, LostNotify: true, NoPolling: true, Expiry: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.Etcd},
		RoundTrips: impls.RoundTrips{N: 2, Note: "transaction putting the key when absent and reading the line's head, transaction deleting the key at its create revision (the lease is granted once per client)"},
		Page:       "docs/lessons/14-quorums.md",
		Source:     "impls/etcdlock/etcdlock.go",
		New:        func(cfg impls.Config) (impls.Locker, error) { return New(cfg) },
	})
}

// Root is the prefix of every lock of this recipe; a lock on key keeps its
// contenders under Root + escaped key + "/".
const Root = "locklab/etcd-lock/"

// Prefix is the lock's contenders' prefix. Escaping keeps a key with a
// slash from reaching into another lock's range ("a" and "a/b" stay apart).
func Prefix(key string) string { return Root + url.PathEscape(key) + "/" }

// Locker is one etcd client and the lease its locks are attached to.
type Locker struct {
	c   *clientv3.Client
	ttl time.Duration

	mu     sync.Mutex
	sess   *session // the current lease; replaced once it is lost
	closed bool
	done   chan struct{}
	// cleanups are the deletes still being retried in the background.
	cleanups sync.WaitGroup
}

// session is one lease and its keep-alive. lost closes when the client can
// no longer claim the lease is alive: the keep-alive stream ended, the
// cluster said the lease is gone, or no renewal was answered for a TTL.
type session struct {
	id     clientv3.LeaseID
	cancel context.CancelFunc
	lost   chan struct{}
	once   sync.Once
}

func (s *session) lose() { s.once.Do(func() { close(s.lost) }) }

func (s *session) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// New connects to every member of the cluster (the client balances over
// them and moves on when one fails) and takes the first lease, so that a
// lock's first request is the transaction that queues it.
func New(cfg impls.Config) (*Locker, error) {
	addrs := cfg.Addrs(topology.Etcd)
	if len(addrs) == 0 {
		return nil, impls.Fail(name, "connect", impls.ErrBackend, errors.New("no etcd address configured"))
	}
	ttl := cfg.TTL
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	c, err := clientv3.New(etcdclient.Config(addrs, max(ttl, 2*time.Second)))
	if err != nil {
		return nil, impls.Fail(name, "connect", impls.ErrBackend, err)
	}
	l := &Locker{c: c, ttl: ttl, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), max(2*ttl, 5*time.Second))
	defer cancel()
	if _, err := l.session(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return l, nil
}

// leaseSeconds is the lease's TTL as etcd takes it: whole seconds, rounded
// up, so a lease never ends before the lab's TTL.
func leaseSeconds(ttl time.Duration) int64 {
	return max(1, int64(math.Ceil(ttl.Seconds())))
}

// session returns the current lease, granting a new one when there is
// none or the last was lost.
func (l *Locker) session(ctx context.Context) (*session, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, errors.New("the client was closed"))
	}
	if s := l.sess; s != nil && !s.isLost() {
		l.mu.Unlock()
		return s, nil
	}
	l.mu.Unlock()
	g, err := l.c.Grant(ctx, leaseSeconds(l.ttl))
	if err != nil {
		// A lease granted without our hearing of it holds no lock and
		// expires by itself: a failure, not an unknown outcome.
		return nil, classify(ctx, "acquire", err, false)
	}
	// The keep-alive stream requires a leader: a member cut off from the
	// rest ends it, and the client goes on through another member, instead
	// of renewing into a member that can forward nothing.
	kctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	ka, err := l.c.KeepAlive(kctx, g.ID)
	if err != nil {
		cancel()
		return nil, classify(ctx, "acquire", err, false)
	}
	s := &session{id: g.ID, cancel: cancel, lost: make(chan struct{})}
	granted := time.Now()
	go l.keepAlive(s, ka, granted)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		cancel()
		s.lose()
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, errors.New("the client was closed"))
	}
	if l.sess != nil && !l.sess.isLost() {
		// Another acquire granted one meanwhile: use it, let ours go.
		cancel()
		s.lose()
		go l.c.Revoke(context.Background(), g.ID)
		return l.sess, nil
	}
	l.sess = s
	return s, nil
}

// keepAlive watches the lease's renewals. The client library closes its
// channel only on a check it runs once a second, up to a second after the
// lease may have ended on the cluster; so the lease counts as lost a TTL
// after the last renewal heard (the cluster's clock for the lease started
// before that answer came, so it ends no later than the client's).
func (l *Locker) keepAlive(s *session, ka <-chan *clientv3.LeaseKeepAliveResponse, since time.Time) {
	defer s.lose()
	defer s.cancel()
	t := time.NewTimer(time.Until(since.Add(l.ttl)))
	defer t.Stop()
	for {
		select {
		case r, ok := <-ka:
			if !ok || r.TTL <= 0 {
				return
			}
			if !t.Stop() {
				<-t.C
			}
			t.Reset(l.ttl)
		case <-t.C:
			return
		case <-l.done:
			return
		}
	}
}

// Close ends the client. Its lease is revoked first, so the cluster
// deletes every key the client held or queued at once, as a session's end
// does; a revoke that cannot get through leaves the lease to expire.
func (l *Locker) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.done)
	s := l.sess
	l.mu.Unlock()
	if s != nil && !s.isLost() {
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
		_, _ = l.c.Revoke(ctx, s.id)
		cancel()
		s.lose()
	}
	l.cleanups.Wait()
	return l.c.Close()
}

func (l *Locker) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.acquire(ctx, key, true)
}

func (l *Locker) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.acquire(ctx, key, false)
}

func (l *Locker) acquire(ctx context.Context, key string, wait bool) (impls.Lease, error) {
	op := "acquire"
	if !wait {
		op = "try-acquire"
	}
	if err := ctx.Err(); err != nil {
		return nil, impls.Fail(name, op, err, nil)
	}
	s, err := l.session(ctx)
	if err != nil {
		return nil, err
	}
	guid, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(name, op, impls.ErrBackend, err)
	}
	pfx := Prefix(key)
	// Our own key names the lease and a guid of this acquire: two acquires
	// of one client are two contenders (not one key that either release
	// deletes, as concurrency.Mutex's per-session key is), and a key found
	// after a lost reply can only be ours.
	own := pfx + strconv.FormatInt(int64(s.id), 16) + "-" + guid
	resp, err := l.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(own), "=", 0)).
		Then(clientv3.OpPut(own, "", clientv3.WithLease(s.id)), clientv3.OpGet(pfx, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		// The put may have applied: delete the key, should it exist, so it
		// does not stand in line for nobody while the lease lives.
		l.cleanup(own, 0)
		return nil, classify(ctx, op, err, true)
	}
	if !resp.Succeeded {
		// A guid is never reused; only a second try of ours could have
		// made the key, and there is none.
		return nil, impls.Fail(name, op, impls.ErrBackend, fmt.Errorf("key %s already existed", own))
	}
	rev := resp.Header.Revision
	owner := resp.Responses[1].GetResponseRange().Kvs
	if heads(owner, rev) {
		return l.grant(key, own, rev, s), nil
	}
	if !wait {
		l.cleanup(own, rev)
		return nil, impls.Fail(name, op, impls.ErrHeld, nil)
	}
	if err := l.waitTurn(ctx, op, pfx, own, rev, s); err != nil {
		l.cleanup(own, rev)
		return nil, err
	}
	return l.grant(key, own, rev, s), nil
}

// waitTurn waits until no key older than ours is left under pfx, watching
// only the one created just before ours (a release wakes one waiter, not
// the herd), and then reads that our key still stands. A watch's delete
// event is news from the past: a waiter frozen while it waited reads it
// only when it thaws, by which time its own lease may have ended and the
// next waiter been granted. So the event only says "look again", and the
// look is a linearizable read of our own key and the line.
func (l *Locker) waitTurn(ctx context.Context, op, pfx, own string, rev int64, s *session) error {
	for {
		older, err := l.c.Get(ctx, pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...)
		if err != nil {
			return classify(ctx, op, err, false)
		}
		if len(older.Kvs) == 0 {
			break
		}
		if err := l.waitDelete(ctx, op, string(older.Kvs[0].Key), older.Header.Revision+1, s); err != nil {
			return err
		}
	}
	mine, err := l.c.Get(ctx, own)
	if err != nil {
		return classify(ctx, op, err, false)
	}
	if len(mine.Kvs) == 0 || mine.Kvs[0].CreateRevision != rev {
		return impls.Fail(name, op, impls.ErrNotHeld, fmt.Errorf("our key %s is gone while it stood in line (lease expired?)", own))
	}
	return nil
}

// waitDelete watches key from revision from until it is deleted. The
// watch requires a leader, so a member cut off from the rest cancels it
// instead of keeping the waiter on a stream that will never report; the
// wait also ends when our own lease is lost (our key went with it).
func (l *Locker) waitDelete(ctx context.Context, op, key string, from int64, s *session) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := l.c.Watch(wctx, key, clientv3.WithRev(from), clientv3.WithFilterPut())
	for {
		select {
		case wr, ok := <-wch:
			if !ok {
				if err := ctx.Err(); err != nil {
					return impls.Fail(name, op, err, nil)
				}
				return nil // look again
			}
			if err := wr.Err(); err != nil {
				if wr.CompactRevision != 0 {
					return nil // compacted past our revision: look again
				}
				if errors.Is(err, rpctypes.ErrNoLeader) {
					// The member we watched through lost its leader; the
					// next look goes through whichever member answers.
					if err := pause(ctx, 20*time.Millisecond); err != nil {
						return impls.Fail(name, op, err, nil)
					}
					return nil
				}
				return classify(ctx, op, err, false)
			}
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.DELETE {
					return nil
				}
			}
		case <-s.lost:
			return impls.Fail(name, op, impls.ErrNotHeld, errors.New("our lease was lost while we waited in line"))
		case <-ctx.Done():
			return impls.Fail(name, op, ctx.Err(), nil)
		}
	}
}

func (l *Locker) grant(key, own string, rev int64, s *session) *lease {
	return &lease{l: l, key: key, own: own, rev: rev, s: s}
}

// cleanup deletes our key (only if its create revision is rev; 0: whatever
// it is) in the background until it is gone, the lease that would take it
// anyway is lost, or the client closes (revoking the lease).
func (l *Locker) cleanup(own string, rev int64) {
	l.cleanups.Add(1)
	go func() {
		defer l.cleanups.Done()
		wait := 20 * time.Millisecond
		for {
			ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl, time.Second))
			_, err := l.deleteOwn(ctx, own, rev)
			cancel()
			if err == nil {
				return
			}
			select {
			case <-l.done:
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Second)
		}
	}()
}

// deleteOwn deletes own if its create revision is rev (0: any), and says
// whether it did.
func (l *Locker) deleteOwn(ctx context.Context, own string, rev int64) (bool, error) {
	cmp := clientv3.Compare(clientv3.CreateRevision(own), ">", 0)
	if rev > 0 {
		cmp = clientv3.Compare(clientv3.CreateRevision(own), "=", rev)
	}
	resp, err := l.c.Txn(ctx).If(cmp).Then(clientv3.OpDelete(own)).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}

// classify maps the client's errors to the lab's kinds. mutating says
// whether the request could have changed state on the cluster.
func classify(ctx context.Context, op string, err error, mutating bool) error {
	var e *impls.Error
	if errors.As(err, &e) {
		return err
	}
	if ctxErr := impls.ContextErr(ctx); ctxErr != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if mutating {
			return impls.Fail(name, op, impls.ErrUnknown, err)
		}
		if ctxErr == nil {
			ctxErr = context.DeadlineExceeded
			if errors.Is(err, context.Canceled) {
				ctxErr = context.Canceled
			}
		}
		return impls.Fail(name, op, ctxErr, err)
	}
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return impls.Fail(name, op, impls.ErrNotHeld, err)
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrTimeout),
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail), errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost):
		// A proposal that timed out in raft may still commit.
		if mutating && !errors.Is(err, rpctypes.ErrNoLeader) {
			return impls.Fail(name, op, impls.ErrUnknown, err)
		}
		return impls.Fail(name, op, impls.ErrBackend, err)
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted, codes.Internal, codes.Unknown:
			if mutating {
				return impls.Fail(name, op, impls.ErrUnknown, err)
			}
			return impls.Fail(name, op, impls.ErrBackend, err)
		}
	}
	return impls.Classify(ctx, name, op, err, mutating)
}

// lease is one key at the head of its lock's line.
type lease struct {
	l   *Locker
	key string
	own string
	rev int64
	s   *session

	mu       sync.Mutex
	released bool
}

func (s *lease) Key() string { return s.key }

// Token is the holder's key's create revision: etcd's store revision grows
// with every write to the cluster, keys are granted in create-revision
// order, and a key is granted only after every older key of the lock was
// deleted, so every later grant's key was created after this one (or
// waited behind it), with a higher revision. It is the fence etcd's own
// documentation recommends for its locks.
func (s *lease) Token() (uint64, bool) { return tokenOf(s.rev), true }

// Lost closes when the lease the key is attached to is lost.
func (s *lease) Lost() <-chan struct{} { return s.s.lost }

// Own is the lease's key on the cluster, for inspection.
func (s *lease) Own() string { return s.own }

// Refresh has no TTL of its own to extend: the client's keep-alives renew
// the lease. It reads that our key, as granted, still stands, and refuses a
// lease whose holder was already told it was lost, so that Lost and
// Refresh never disagree.
func (s *lease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	released := s.released
	s.mu.Unlock()
	if released || s.s.isLost() {
		return impls.Fail(name, "refresh", impls.ErrNotHeld, nil)
	}
	r, err := s.l.c.Get(ctx, s.own)
	if err != nil {
		return classify(ctx, "refresh", err, false)
	}
	if len(r.Kvs) == 0 || r.Kvs[0].CreateRevision != s.rev {
		return impls.Fail(name, "refresh", impls.ErrNotHeld, fmt.Errorf("key %s is gone", s.own))
	}
	if s.s.isLost() {
		return impls.Fail(name, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

// Release deletes our key if it is still the one we were granted (its
// create revision): a stale release can delete nothing else, not even a
// newer key of the same lease. If its outcome is unknown, the delete goes
// on in the background.
func (s *lease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(name, "release", impls.ErrNotHeld, nil)
	}
	s.released = true
	deleted, err := s.l.deleteOwn(ctx, s.own, s.rev)
	switch {
	case err != nil:
		s.l.cleanup(s.own, s.rev)
		return classify(ctx, "release", err, true)
	case !deleted:
		return impls.Fail(name, "release", impls.ErrNotHeld, fmt.Errorf("key %s was gone (lease expired?)", s.own))
	}
	return nil
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
