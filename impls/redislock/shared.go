package redislock

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
)

// releaseFunc is the one step in which the broken variants differ from
// redis-setnx-px after the lock is granted: how they delete it. It returns
// how many keys it deleted (0 or 1), or an error already classified.
type releaseFunc func(ctx context.Context, s *tokenLease) (int64, error)

// tokenLease is a lease whose lock key holds a random token, shared by
// redis-setnx-expire, redis-del-release and redis-get-del-release. Refresh is
// owner-checked (the same script as redis-setnx-px) so that each variant is
// wrong only where its source documents say.
type tokenLease struct {
	name    string
	rdb     redis.UniversalClient
	ttl     time.Duration
	key     string
	token   string
	fence   uint64
	fenced  bool
	release releaseFunc

	mu       sync.Mutex
	released bool
}

func (s *tokenLease) Key() string           { return s.key }
func (s *tokenLease) Token() (uint64, bool) { return s.fence, s.fenced }
func (s *tokenLease) Lost() <-chan struct{} { return never }

func (s *tokenLease) String() string {
	if !s.fenced {
		return s.key
	}
	return s.key + "#" + strconv.FormatUint(s.fence, 10)
}

func (s *tokenLease) Refresh(ctx context.Context) error {
	n, err := redisclient.RefreshScript.Run(ctx, s.rdb, []string{lockKey(s.key)}, s.token, s.ttl.Milliseconds()).Int64()
	if err != nil {
		return impls.Classify(ctx, s.name, "refresh", err, true)
	}
	if n == 0 {
		return impls.Fail(s.name, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

func (s *tokenLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(s.name, "release", impls.ErrNotHeld, nil)
	}
	n, err := s.release(ctx, s)
	if err != nil {
		return err
	}
	// Whatever the answer, this lease has had its one release.
	s.released = true
	if n == 0 {
		return impls.Fail(s.name, "release", impls.ErrNotHeld, nil)
	}
	return nil
}

// ownerCheckedRelease is the correct release: compare and delete in one
// atomic script.
func ownerCheckedRelease(ctx context.Context, s *tokenLease) (int64, error) {
	n, err := redisclient.ReleaseScript.Run(ctx, s.rdb, []string{lockKey(s.key)}, s.token).Int64()
	if err != nil {
		return 0, impls.Classify(ctx, s.name, "release", err, true)
	}
	return n, nil
}

// runAcquire runs an acquire script of acquireScript's shape on key and
// returns whether it granted, and then the fencing token, or else the
// holder's PTTL. rdb is a client, or one connection of it (redis.Conn).
func runAcquire(ctx context.Context, s *redis.Script, rdb redis.Scripter, key, token string, ttl time.Duration) (bool, int64, error) {
	res, err := s.Run(ctx, rdb, []string{lockKey(key), fenceKey(key)}, token, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 || res[0] < 0 || res[0] > 1 {
		return false, 0, fmt.Errorf("acquire script returned %v, want {1, token} or {0, pttl}", res)
	}
	if res[0] == 1 && res[1] < 1 {
		return false, 0, fmt.Errorf("acquire script granted with token %d", res[1])
	}
	return res[0] == 1, res[1], nil
}

// fencedLock is redis-setnx-px's acquire (SET NX PX and a fencing INCR in
// one script) with a release of the variant's choosing.
type fencedLock struct {
	name    string
	rdb     redis.UniversalClient
	ttl     time.Duration
	release releaseFunc
}

func (l *fencedLock) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	lease, _, err := l.try(ctx, key)
	return lease, err
}

func (l *fencedLock) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		return l.try(ctx, key)
	})
}

func (l *fencedLock) Close() error { return l.rdb.Close() }

func (l *fencedLock) try(ctx context.Context, key string) (impls.Lease, time.Duration, error) {
	token, err := impls.NewToken()
	if err != nil {
		return nil, 0, impls.Fail(l.name, "acquire", impls.ErrBackend, err)
	}
	granted, n, err := runAcquire(ctx, acquireScript, l.rdb, key, token, l.ttl)
	if err != nil {
		return nil, 0, impls.Classify(ctx, l.name, "acquire", err, true)
	}
	if !granted {
		// n is the holder's PTTL: how long it has left (-1: no expiry).
		return nil, time.Duration(n) * time.Millisecond, impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	}
	return &tokenLease{
		name: l.name, rdb: l.rdb, ttl: l.ttl, key: key, token: token,
		fence: uint64(n), fenced: true, release: l.release,
	}, 0, nil
}
