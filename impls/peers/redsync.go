package peers

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/quorum"
	"github.com/locklab/locklab/topology"
)

const (
	redsyncName  = "peer-redsync"
	redsync5Name = "peer-redsync-5"
)

// redsync's defaults are tuned for its default 8s expiry: a retry delay drawn
// from [50ms, 250ms). The adapter keeps that ratio of delay to expiry, so a
// 1s lease waits 6–31ms between tries.
const (
	redsyncDefaultExpiry   = 8 * time.Second
	redsyncDefaultDelayMin = 50 * time.Millisecond
	redsyncDefaultDelayMax = 250 * time.Millisecond
)

func init() {
	for _, v := range []struct {
		name       string
		nodes      int
		summary    string
		roundTrips string
		page       string
	}{
		{redsyncName, 1, "go-redsync/redsync " + redsyncVer + " on one Redis node: SET NX PX, " +
			"owner-checked Lua extend and delete, validity time (Until) as deadline; no fencing token",
			"SET NX PX, release script", "docs/lessons/05-lease-expires-under-a-pause.md"},
		{redsync5Name, 5, "go-redsync/redsync " + redsyncVer + ": Redlock over 5 independent Redis nodes, " +
			"quorum 3, validity time (Until) as deadline; no fencing token",
			"SET NX PX on 5 nodes in parallel, release script on 5 nodes in parallel", "docs/lessons/08-redlock.md"},
	} {
		impls.Register(impls.Spec{
			Name:    v.name,
			Summary: v.summary,
			Peer:    true,
			Caps:    impls.Capabilities{Expiry: true, Validity: true},
			Backend: impls.Backend{Kind: topology.Redis, Nodes: v.nodes},
			// One key per node, named as the caller's key.
			RoundTrips: impls.RoundTrips{N: 2, Note: v.roundTrips},
			Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "K", Type: "string", Expires: true}}},
			Page:       v.page,
			Source:     "impls/peers/redsync.go",
			New: func(cfg impls.Config) (impls.Locker, error) {
				return NewRedsync(v.name, v.nodes, cfg)
			},
		})
	}
}

// Redsync adapts github.com/go-redsync/redsync over the go-redis v9 pool
// adapter the library ships. Each acquire builds its own Mutex: a Mutex holds
// one lock value, the proof of one grant.
type Redsync struct {
	name    string
	clients []redis.UniversalClient
	rs      *redsync.Redsync
	ttl     time.Duration
	quorum  int // as the library computes it: a strict majority
	tries   int
	delayLo time.Duration
	delayHi time.Duration
}

// NewRedsync builds a client on the first nodes of cfg.Addrs(topology.Redis).
func NewRedsync(name string, nodes int, cfg impls.Config) (*Redsync, error) {
	clients, err := redisClients(cfg, name, nodes)
	if err != nil {
		return nil, err
	}
	pools := make([]redsyncredis.Pool, nodes)
	for i, c := range clients {
		pools[i] = goredis.NewPool(c)
	}
	l := &Redsync{
		name: name, clients: clients, rs: redsync.New(pools...), ttl: cfg.TTL, quorum: quorum.Majority(nodes),
		delayLo: scaled(redsyncDefaultDelayMin, redsyncDefaultExpiry, cfg.TTL, time.Millisecond),
		delayHi: scaled(redsyncDefaultDelayMax, redsyncDefaultExpiry, cfg.TTL, 2*time.Millisecond),
	}
	// Enough tries for one LockContext call to outwait a holder that lets its
	// lease run out twice over; Acquire then calls it again until ctx ends.
	l.tries = int(2*cfg.TTL/((l.delayLo+l.delayHi)/2)) + 1
	return l, nil
}

// delay is the library's default delay function, rescaled (see above).
func (l *Redsync) delay(int) time.Duration {
	return l.delayLo + rand.N(l.delayHi-l.delayLo)
}

// TryAcquire is TryLockContext: one attempt on every node.
func (l *Redsync) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	m := l.rs.NewMutex(key, redsync.WithExpiry(l.ttl))
	if err := m.TryLockContext(ctx); err != nil {
		return nil, l.fail(ctx, "acquire", err, impls.ErrHeld)
	}
	return &redsyncLease{l: l, m: m}, nil
}

// Acquire is LockContext with the library's own retry loop. When its tries
// run out with the lock held, we start it again: only the end of ctx, or a
// node failure on the last try (earlier ones the library retries), ends the
// wait.
func (l *Redsync) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	m := l.rs.NewMutex(key, redsync.WithExpiry(l.ttl), redsync.WithTries(l.tries),
		redsync.WithRetryDelayFunc(l.delay))
	for {
		err := m.LockContext(ctx)
		if err == nil {
			return &redsyncLease{l: l, m: m}, nil
		}
		// The library's own loop goes on after a try that found the lock
		// held or that reached its quorum too late; so does ours.
		if errors.Is(err, redsync.ErrFailed) && impls.ContextErr(ctx) == nil {
			continue
		}
		if err = l.fail(ctx, "acquire", err, impls.ErrHeld); !errors.Is(err, impls.ErrHeld) {
			return nil, err
		}
	}
}

// fail maps what redsync returned onto the lab's kinds. notOurs is the kind
// for "enough nodes answered that the lock is someone else's (or nobody's)
// that no quorum can be ours": ErrHeld for an acquire, ErrNotHeld for a
// refresh or release.
func (l *Redsync) fail(ctx context.Context, op string, err error, notOurs error) error {
	ctxErr := impls.ContextErr(ctx)
	switch {
	case errors.Is(err, redsync.ErrFailed) && ctxErr != nil:
		// LockContext returns ErrFailed, not ctx.Err(), when ctx ends between
		// tries. (When ctx ends during a try, the library releases with the
		// same dead ctx, so a SET NX that landed stays until its TTL: the
		// lock is then blocked for a TTL, but nobody believes they hold it.)
		return impls.Fail(l.name, op, ctxErr, err)
	case errors.Is(err, redsync.ErrFailed):
		// With ctx live, the last try reached a quorum too late to leave any
		// validity time, and the library undid it (a try that found the lock
		// held ends in ErrTaken or node errors instead).
		return impls.Fail(l.name, op, impls.ErrBackend, err)
	case errors.Is(err, redsync.ErrExtendFailed):
		// A quorum extended the key but too late to leave validity time: the
		// library declares the lease over, and Until stays in the past.
		return impls.Fail(l.name, op, impls.ErrNotHeld, err)
	}
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) {
		return impls.Fail(l.name, op, notOurs, err)
	}
	notOursN, unknown := 0, false
	for _, leaf := range leaves(err) {
		var nodeTaken *redsync.ErrNodeTaken
		var nodeErr *redsync.RedisError
		switch {
		case errors.Is(leaf, redsync.ErrLockAlreadyExpired), errors.As(leaf, &nodeTaken):
			notOursN++
		case errors.As(leaf, &nodeErr):
			// Every node call writes (SET NX, extend and delete scripts), so
			// a cut request may have landed.
			if errors.Is(impls.Classify(ctx, l.name, op, nodeErr.Err, true), impls.ErrUnknown) {
				unknown = true
			}
		}
	}
	switch {
	case notOursN > len(l.clients)-l.quorum:
		// Even if every node that failed had answered yes, no quorum.
		return impls.Fail(l.name, op, notOurs, err)
	case unknown:
		return impls.Fail(l.name, op, impls.ErrUnknown, err)
	case ctxErr != nil:
		return impls.Fail(l.name, op, ctxErr, err)
	}
	return impls.Fail(l.name, op, impls.ErrBackend, err)
}

// leaves flattens the errors.Join trees redsync builds, one leaf per node.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

func (l *Redsync) Close() error { return closeAll(l.clients) }

type redsyncLease struct {
	l *Redsync
	m *redsync.Mutex
}

func (s *redsyncLease) Key() string           { return s.m.Name() }
func (s *redsyncLease) Token() (uint64, bool) { return 0, false }
func (s *redsyncLease) Lost() <-chan struct{} { return never }

// ValidUntil is the library's validity time: the expiry less the time the
// acquire (or last extend) took and the clock-drift allowance.
func (s *redsyncLease) ValidUntil() time.Time { return s.m.Until() }

// Refresh is ExtendContext: the owner-checked PEXPIRE script on every node.
func (s *redsyncLease) Refresh(ctx context.Context) error {
	ok, err := s.m.ExtendContext(ctx)
	if ok {
		return nil
	}
	if err == nil {
		err = redsync.ErrExtendFailed
	}
	return s.l.fail(ctx, "refresh", err, impls.ErrNotHeld)
}

// Release is UnlockContext: the owner-checked delete script on every node.
// A second release finds the key gone, which the library reports as
// ErrLockAlreadyExpired.
func (s *redsyncLease) Release(ctx context.Context) error {
	ok, err := s.m.UnlockContext(ctx)
	if ok {
		return nil
	}
	if err == nil {
		err = redsync.ErrLockAlreadyExpired
	}
	return s.l.fail(ctx, "release", err, impls.ErrNotHeld)
}
