package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

const name = "redlock"

func init() {
	impls.Register(impls.Spec{
		Name: name,
		Summary: "antirez's Redlock: SET NX PX on N independent nodes in parallel, granted on a majority " +
			"within the validity time (TTL - elapsed - drift); no fencing token",
		Caps:       impls.Capabilities{Expiry: true, Validity: true},
		Backend:    impls.Backend{Kind: topology.Redis, Nodes: 5},
		RoundTrips: impls.RoundTrips{N: 2, Note: "SET NX PX on every node in parallel, release script on every node in parallel"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "K", Type: "string", Expires: true}}},
		Page:       "docs/lessons/08-redlock.md",
		Source:     "impls/redlock/redlock.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return New(cfg)
		},
	})
}

// Redlock is one client of the lock over N independent Redis nodes. Lock
// keys are stored under the caller's key, unchanged, on every node.
type Redlock struct {
	nodes       []*redis.Client
	addrs       []string
	ttl         time.Duration
	nodeTimeout time.Duration
	quorum      int

	mu   sync.Mutex
	last []chan struct{} // per node: closed when our latest request to it finished
}

// New builds a client with one connection pool per node in cfg.Addrs(topology.Redis).
func New(cfg impls.Config) (*Redlock, error) {
	if len(cfg.Addrs(topology.Redis)) == 0 {
		return nil, fmt.Errorf("%s: no Redis address configured", name)
	}
	if cfg.TTL <= 0 {
		return nil, fmt.Errorf("%s: TTL must be positive, got %v", name, cfg.TTL)
	}
	l := &Redlock{
		addrs:       cfg.Addrs(topology.Redis),
		ttl:         cfg.TTL,
		nodeTimeout: NodeTimeout(cfg.TTL),
		quorum:      quorumOf(len(cfg.Addrs(topology.Redis))),
		last:        make([]chan struct{}, len(cfg.Addrs(topology.Redis))),
	}
	for _, addr := range cfg.Addrs(topology.Redis) {
		// The lab's lock client (no retries: a retried SET NX whose first
		// reply was lost would report "held" for a lock we hold, and
		// Redlock retries whole attempts itself, on every node at once),
		// with a node's budget for every wait.
		o := redisclient.Options(addr, cfg.TTL)
		// A dead or stalled node must cost at most a small slice of the
		// TTL, or the time spent waiting on it eats the validity the live
		// majority granted.
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = l.nodeTimeout, l.nodeTimeout, l.nodeTimeout
		// One round trip less on every new connection, which matters when
		// the dial itself is inside the per-node budget.
		o.DisableIdentity = true
		l.nodes = append(l.nodes, redis.NewClient(o))
	}
	return l, nil
}

// NodeTimeout is the budget of one request to one node: much smaller than
// the TTL (antirez suggests 5-50ms for a 10s TTL) so that a node that is
// down or stalled is skipped quickly instead of consuming the validity time.
func NodeTimeout(ttl time.Duration) time.Duration {
	t := ttl / 20
	if t > 50*time.Millisecond {
		t = 50 * time.Millisecond
	}
	if t < 5*time.Millisecond {
		t = 5 * time.Millisecond
	}
	return t
}

// drift is the clock-drift allowance subtracted from the validity: the
// nodes' clocks may run faster than ours, expiring keys early. The 2ms
// covers the granularity of PX expiry.
func (l *Redlock) drift() time.Duration { return l.ttl/100 + 2*time.Millisecond }

func setNX(key, token string, ttl time.Duration) func(context.Context, *redis.Client) (bool, error) {
	return func(ctx context.Context, rdb *redis.Client) (bool, error) {
		err := rdb.Do(ctx, "SET", key, token, "NX", "PX", ttl.Milliseconds()).Err()
		if errors.Is(err, redis.Nil) {
			return false, nil // held by another token
		}
		return err == nil, err
	}
}

func runScript(s *redis.Script, key string, args ...any) func(context.Context, *redis.Client) (bool, error) {
	return func(ctx context.Context, rdb *redis.Client) (bool, error) {
		n, err := s.Run(ctx, rdb, []string{key}, args...).Int64()
		return err == nil && n == 1, err
	}
}

// nodeErrors renders the failed nodes' errors as a plain cause. It does not
// wrap them: each may carry a different kind, and the returned error must
// wrap exactly one.
func (l *Redlock) nodeErrors(rs []reply) error {
	var parts []string
	for i, r := range rs {
		if r.err != nil {
			parts = append(parts, fmt.Sprintf("node %d (%s): %v", i, l.addrs[i], r.err))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// errTooSlow: a majority granted the lock, but getting it took longer than
// the TTL allows, so no validity time was left.
var errTooSlow = errors.New("majority reached but no validity time left")

func (l *Redlock) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.attempt(ctx, key)
}

// Acquire retries attempts after a random delay, so that clients that split
// the nodes between them do not collide again in lockstep. It retries only
// while the lock is contended (or an attempt ran out of validity): when a
// majority is unreachable it returns at once, so callers see the lock as
// unavailable rather than as a wait that never ends.
func (l *Redlock) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	wait := time.Millisecond
	maxWait := l.ttl / 20
	if maxWait < 2*time.Millisecond {
		maxWait = 2 * time.Millisecond
	}
	if maxWait > 32*time.Millisecond {
		maxWait = 32 * time.Millisecond
	}
	for {
		lease, err := l.attempt(ctx, key)
		if err == nil {
			return lease, nil
		}
		if impls.ContextErr(ctx) != nil || !(errors.Is(err, impls.ErrHeld) || errors.Is(err, errTooSlow)) {
			return nil, err
		}
		t := time.NewTimer(time.Duration(rand.Int64N(int64(wait))) + 1)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, impls.Fail(name, "acquire", ctx.Err(), errors.New(err.Error()))
		case <-t.C:
		}
		if wait *= 2; wait > maxWait {
			wait = maxWait
		}
	}
}

// attempt is one round of the algorithm: SET NX PX on every node in
// parallel with one token, granted on a majority with validity left;
// otherwise every node is cleaned up and the failure classified.
func (l *Redlock) attempt(ctx context.Context, key string) (impls.Lease, error) {
	// The token proves which attempt a key on a node belongs to.
	token, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, err)
	}
	start := time.Now() // monotonic: immune to wall-clock jumps
	f := l.send(ctx, "acquire", setNX(key, token, l.ttl))
	// The grant is decided by the first majority to answer: waiting for
	// the slowest node too cost about 1.7x per fan-out on two cores (five
	// Redis processes to schedule). The other requests go on, and whatever
	// this client sends a node next waits for them (send), so a late SET
	// can never land after our release and outlive it.
	majority := f.until(l.quorum)
	end := time.Now()
	validity := l.grantValidity(start, end)
	if majority && validity > 0 {
		// Every key was set at or after start, so each lives until at least
		// start+TTL by the node's clock; end+validity is start+TTL-drift.
		return &lease{l: l, key: key, token: token, validUntil: end.Add(validity), acquire: f, lost: make(chan struct{})}, nil
	}
	<-f.done
	rs := f.replies
	var held, failed []int
	granted := 0
	for i, r := range rs {
		switch {
		case r.err != nil:
			failed = append(failed, i)
		case r.ok:
			granted++
		default:
			held = append(held, i)
		}
	}

	// Not granted: undo on every node that set our key or may have (no
	// answer: the SET may have gone through). A node that answered "held"
	// has another value under the key, and our token is new to this
	// attempt, so it has nothing of ours: sparing it the script took the
	// commands per contended acquisition from 41 to 28 (a failed attempt
	// mostly finds the lock held everywhere). The caller's ctx may have
	// ended already; the cleanup must run regardless.
	notOurs := make([]bool, len(rs))
	for _, i := range held {
		notOurs[i] = true
	}
	cleanup := l.onAll(context.WithoutCancel(ctx), "acquire", runScript(redisclient.ReleaseScript, key, token), notOurs...)
	// Nodes that may still hold our token: those we set or might have set,
	// whose cleanup got no answer.
	maybeOurs := 0
	for i, r := range rs {
		mayHaveSet := r.ok || (r.err != nil && errors.Is(r.err, impls.ErrUnknown))
		if mayHaveSet && cleanup[i].err != nil {
			maybeOurs++
		}
	}
	cause := l.nodeErrors(rs)
	ctxErr := impls.ContextErr(ctx)
	switch {
	case maybeOurs >= l.quorum:
		// Other clients may see the lock as ours until the keys expire.
		return nil, impls.Fail(name, "acquire", impls.ErrUnknown, cause)
	case ctxErr != nil:
		return nil, impls.Fail(name, "acquire", ctxErr, cause)
	case len(held) >= l.quorum:
		return nil, impls.Fail(name, "acquire", impls.ErrHeld, nil)
	case len(failed) > len(l.nodes)-l.quorum:
		// Too few nodes answered for any majority; the attempt left nothing
		// that could count as a grant.
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, cause)
	case granted >= l.quorum:
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, fmt.Errorf("%w: took %v of a %v TTL", errTooSlow, end.Sub(start), l.ttl))
	default:
		// Split vote: other attempts hold some nodes and nobody reached a
		// majority; the lock is contended.
		return nil, impls.Fail(name, "acquire", impls.ErrHeld, fmt.Errorf("split vote: %d granted, %d held, %d failed of %d", granted, len(held), len(failed), len(l.nodes)))
	}
}

func (l *Redlock) Close() error {
	var errs []error
	for _, rdb := range l.nodes {
		errs = append(errs, rdb.Close())
	}
	return errors.Join(errs...)
}

// lease is one Redlock grant. It implements impls.Deadliner.
type lease struct {
	l     *Redlock
	key   string
	token string
	lost  chan struct{}

	// acquire is the grant's fan-out, whose slowest requests may still be
	// running when the lease is handed out.
	acquire *fanout

	mu         sync.Mutex
	validUntil time.Time
	nodes      []int // nil until settled
	released   bool
	lostOnce   sync.Once
}

// settle waits for the grant's remaining requests (each bounded by the
// per-node timeout) and records every node that set our key. (What the
// lease sends next needs no wait: send orders it after them.) Call it
// without s.mu held.
func (s *lease) settle() {
	<-s.acquire.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes == nil {
		s.nodes = []int{}
		for i, r := range s.acquire.replies {
			if r.yes() {
				s.nodes = append(s.nodes, i)
			}
		}
	}
}

func (s *lease) Key() string { return s.key }

// Token: Redlock issues no fencing token. Its keys carry a random value, not
// a number that grows with each grant, so a resource cannot reject a stale
// holder's writes (Kleppmann's objection to Redlock).
func (s *lease) Token() (uint64, bool) { return 0, false }

// Lost is closed once a Refresh finds the lock no longer held; Redlock has
// no way to learn it sooner.
func (s *lease) Lost() <-chan struct{} { return s.lost }

func (s *lease) String() string { return s.key + "@" + s.token[:8] }

// ValidUntil is the end of the validity time computed at grant (or at the
// last successful Refresh), on the local monotonic clock. Work past it may
// overlap with another holder's.
func (s *lease) ValidUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.validUntil
}

// Nodes returns the indexes (into Config.Redis) of the nodes that confirmed
// this lease's token at grant (those that answered after the majority
// too), or at the last successful Refresh. Tests use it to fault exactly
// the nodes the lease rests on.
func (s *lease) Nodes() []int {
	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.nodes...)
}

func (s *lease) markLost() { s.lostOnce.Do(func() { close(s.lost) }) }

// Refresh extends the keys on every node, succeeding only when a majority
// still held our token and validity is left, as for a grant.
func (s *lease) Refresh(ctx context.Context) error {
	l := s.l
	s.mu.Lock()
	released, expired := s.released, !time.Now().Before(s.validUntil)
	s.mu.Unlock()
	if released {
		return impls.Fail(name, "refresh", impls.ErrNotHeld, errors.New("released"))
	}
	if expired {
		// Past its validity the lease must be treated as lost, even if some
		// keys linger: a careful client does not extend what it may no
		// longer own.
		s.markLost()
		return impls.Fail(name, "refresh", impls.ErrNotHeld, errors.New("validity time over"))
	}
	start := time.Now()
	rs := l.onAll(ctx, "refresh", runScript(redisclient.RefreshScript, s.key, s.token, l.ttl.Milliseconds()))
	end := time.Now()
	validity := l.ttl - end.Sub(start) - l.drift()

	var extended []int
	notOurs, ambiguous := 0, false
	for i, r := range rs {
		switch {
		case r.err != nil:
			ambiguous = ambiguous || errors.Is(r.err, impls.ErrUnknown)
		case r.ok:
			extended = append(extended, i)
		default:
			notOurs++
		}
	}
	ctxErr := impls.ContextErr(ctx)
	switch {
	case len(extended) >= l.quorum && validity > 0:
		s.mu.Lock()
		s.validUntil, s.nodes = end.Add(validity), extended
		s.mu.Unlock()
		return nil
	case notOurs > len(l.nodes)-l.quorum:
		// No majority can hold our token any more.
		s.markLost()
		return impls.Fail(name, "refresh", impls.ErrNotHeld, nil)
	case len(extended) >= l.quorum:
		return impls.Fail(name, "refresh", impls.ErrBackend, fmt.Errorf("%w: took %v of a %v TTL", errTooSlow, end.Sub(start), l.ttl))
	case ctxErr != nil && !ambiguous:
		return impls.Fail(name, "refresh", ctxErr, l.nodeErrors(rs))
	case ambiguous:
		return impls.Fail(name, "refresh", impls.ErrUnknown, l.nodeErrors(rs))
	default:
		return impls.Fail(name, "refresh", impls.ErrBackend, l.nodeErrors(rs))
	}
}

// Release deletes our key on every node (not only those that granted it:
// one that timed out may have set it). It succeeds if a majority still
// held our token: with fewer, the lock was no longer ours to release
// (expired, deleted, or taken behind our back), and the keys found are
// deleted all the same. A key of ours on one node alone (a SET that landed
// after its key was taken from us) frees nobody's lock, and must not make
// a stale release look like a good one.
func (s *lease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(name, "release", impls.ErrNotHeld, errors.New("released already"))
	}
	// Decided by the first majority to delete our key, like the grant; the
	// other deletes go on, ahead of whatever this client sends them next.
	f := s.l.send(ctx, "release", runScript(redisclient.ReleaseScript, s.key, s.token))
	if f.until(s.l.quorum) {
		s.released = true
		return nil
	}
	<-f.done
	rs := f.replies
	deleted, failed, ambiguous := 0, 0, false
	for _, r := range rs {
		switch {
		case r.err != nil:
			failed++
			ambiguous = ambiguous || errors.Is(r.err, impls.ErrUnknown)
		case r.ok:
			deleted++
		}
	}
	ctxErr := impls.ContextErr(ctx)
	switch {
	case deleted+failed < s.l.quorum:
		// Even if every node that failed held our token, no majority did.
		s.released = true
		return impls.Fail(name, "release", impls.ErrNotHeld, fmt.Errorf("our token on %d of %d nodes", deleted, len(rs)))
	case ctxErr != nil && !ambiguous:
		return impls.Fail(name, "release", ctxErr, s.l.nodeErrors(rs))
	case ambiguous:
		return impls.Fail(name, "release", impls.ErrUnknown, s.l.nodeErrors(rs))
	default:
		return impls.Fail(name, "release", impls.ErrBackend, s.l.nodeErrors(rs))
	}
}

var _ impls.Deadliner = (*lease)(nil)
