package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

const (
	plainName  = "redis-reentrant"
	fencedName = "redis-reentrant-fenced"

	// defaultTTL is Redisson's lockWatchdogTimeout, used when no TTL is given.
	defaultTTL = 30 * time.Second
	// fenceField holds the fencing token of the current grant in the lock's
	// hash. Owner ids never start with ':', so it cannot collide with one.
	fenceField = ":fence"
)

func init() {
	register(plainName, false,
		"Redisson-style: hash owner->hold count, reentrant, watchdog renews every ttl/3; a release wakes one waiter (BLPOP on a token it pushes)",
		"docs/lessons/05-lease-expires-under-a-pause.md")
	register(fencedName, true,
		"redis-reentrant plus a fencing token from an INCR in the granting script; re-entries keep the token",
		"docs/lessons/06-fencing-tokens.md")
}

func register(name string, fenced bool, summary, page string) {
	keys := []impls.RedisKey{{Name: "redisson:{K}", Type: "hash", Expires: true}}
	if fenced {
		keys = append(keys, impls.RedisKey{Name: "redisson:{K}:fence", Type: "string", IsToken: true})
	}
	impls.Register(impls.Spec{
		Name:    name,
		Summary: summary,
		Caps: impls.Capabilities{
			Fencing: fenced, Reentrant: true, Renewal: true, LostNotify: true, NoPolling: true, Expiry: true,
			// Queued: a release wakes the waiter blocked longest (wake.go),
			// whose attempt rides its BLPOP: one frozen there can be
			// granted the lock while it cannot know, and the others wait.
			Queued: true,
		},
		Backend: impls.Backend{Kind: topology.Redis},
		// A BLPOP only when waiting: the uncontended pair is two scripts.
		RoundTrips: impls.RoundTrips{N: 2, Note: "acquire script, release script (a BLPOP only when waiting)"},
		Footprint:  impls.Footprint{Redis: keys},
		Page:       page,
		Source:     "impls/redisson/redisson.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			l, err := Open(cfg.Servers[topology.Redis], Options{
				TTL: cfg.TTL, Fenced: fenced, ClientID: cfg.ClientID,
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return l, nil
		},
	})
}

// acquireScript grants the lock when it is free or already ours: the hash
// field named by our owner id counts our holds. Redisson's script returns
// nil on a grant; this one returns {count, token} so the client can tell a
// first grant (count 1) from a re-entry, and the fenced variant can draw its
// token in the same atomic step. A refusal returns {0, pttl}: how long the
// holder has left, which bounds a waiter's sleep should no token come.
// The PTTL read first doubles as the existence check (-2: no key), and the
// re-entry check (HEXISTS) runs only when this Locker holds the key as far
// as it knows (ARGV[4]): a waiter's refusal is then the script and one
// command (under contention a waiter mostly blocks without one, see
// Acquire). A grant the Locker does not know of (an acquire whose reply was
// lost) is refused like anybody else's and frees itself one TTL later,
// since no watchdog renews it.
//
// A first grant does not delete the wake list: a blocked waiter pops a
// release's token the moment it is pushed, so the list is nearly always
// empty by now, and the DEL was a command on every grant to spare the rare
// waiter woken by a stale token one refused attempt (the release keeps the
// list at one token, see releaseScript).
//
// A first grant on a free key is count 1 by definition, so it writes our
// field and the fenced variant's token in one HSET (HINCRBY then HSET was a
// command more per fenced grant).
//
// A garbled counter (not a number, or not positive) gives no token: a first
// grant fails before it writes anything; a re-entry's count 1 (our field was
// there, but not positive) deletes the key again and fails, rather than
// leave it held for a TTL or grant a token that is not
// one (a negative INCR read as uint64 was a token near 2^64, which a fenced
// resource would then hold against every later holder).
//
// KEYS: lock hash, fence counter, wake list. ARGV: ttl ms, owner id, "1" if
// fenced, "1" if the Locker holds the key.
var acquireScript = redis.NewScript(`
local pttl = redis.call('pttl', KEYS[1])
if pttl == -2 then
  -- Free: a first grant, count 1, written with its token in one HSET.
  local token = 0
  if ARGV[3] == '1' then
    token = redis.pcall('incr', KEYS[2])
    if type(token) ~= 'number' or token < 1 then
      return redis.error_reply('fencing counter ' .. KEYS[2] .. ' gives no positive token: ' ..
        (type(token) == 'table' and tostring(token.err) or tostring(token)))
    end
    redis.call('hset', KEYS[1], ARGV[2], 1, '` + fenceField + `', token)
  else
    redis.call('hset', KEYS[1], ARGV[2], 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, token}
end
if ARGV[4] == '1' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  local token = 0
  if ARGV[3] == '1' then
    if count == 1 then
      token = redis.pcall('incr', KEYS[2])
      if type(token) ~= 'number' or token < 1 then
        redis.call('del', KEYS[1])
        return redis.error_reply('fencing counter ' .. KEYS[2] .. ' gives no positive token: ' ..
          (type(token) == 'table' and tostring(token.err) or tostring(token)))
      end
      redis.call('hset', KEYS[1], '` + fenceField + `', token)
    else
      token = tonumber(redis.call('hget', KEYS[1], '` + fenceField + `')) or 0
    end
  end
  return {count, token}
end
return {0, pttl}
`)

// releaseScript takes one hold off our count. The last one deletes the lock
// and pushes a token on the wake list, which wakes one waiter (the list
// expires with the lease, so a token nobody pops does not stay, and it is
// cut back to one token, so releases nobody waited for wake one waiter, not
// several). It returns -1 if the lock is not ours, 0 if we still hold it, 1
// if it is now free.
//
// When the Locker drops its last hold (ARGV[3]), the owner check and the
// removal are one HDEL: our field goes whatever count the server kept (a
// count above ours is a grant whose reply we never got, which nobody would
// release). The plain lock's hash then has no field left and Redis deletes
// it; the fenced one still has its token field, deleted with the hash.
//
// KEYS: lock hash, wake list. ARGV: ttl ms, owner id, "1" if it is the
// Locker's last hold, "1" if fenced.
var releaseScript = redis.NewScript(`
if ARGV[3] == '1' then
  if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
    return -1
  end
  if ARGV[4] == '1' then
    redis.call('del', KEYS[1])
  end
else
  if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return -1
  end
  if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[1])
    return 0
  end
  redis.call('del', KEYS[1])
end
if redis.call('rpush', KEYS[2], '1') > 1 then
  redis.call('ltrim', KEYS[2], 0, 0)
end
redis.call('pexpire', KEYS[2], ARGV[1])
return 1
`)

// renewScript extends the lock only while our owner field is in it. An
// expired lock has no fields, so a renewal can never revive it.
//
// KEYS: lock hash. ARGV: ttl ms, owner id.
var renewScript = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  return redis.call('pexpire', KEYS[1], ARGV[1])
end
return 0
`)

// The hash tag puts a lock, its fence counter and its wake list in one slot
// on a Redis Cluster. The prefix keeps the hash apart from the string keys
// of the redislock family, which may share a server and key names.
func lockKey(key string) string  { return "redisson:{" + key + "}" }
func fenceKey(key string) string { return "redisson:{" + key + "}:fence" }
func wakeKey(key string) string  { return "redisson:{" + key + "}:wake" }

// Options configure a Locker.
type Options struct {
	TTL      time.Duration // lease time; the watchdog renews every TTL/3
	Fenced   bool          // issue fencing tokens (redis-reentrant-fenced)
	ClientID string        // appended to the owner id, so HGETALL shows who holds
}

// Locker is one client of the reentrant lock.
//
// Redisson names an owner "<client uuid>:<thread id>", so that the same
// thread may re-enter. Go exposes no goroutine ids, so here re-entry is per
// Locker: every grant a Locker holds on a key counts as the same owner, and
// two goroutines sharing one Locker do NOT exclude each other. Give every
// independent client its own Locker (as the scenarios do).
type Locker struct {
	name string
	rdb  redis.UniversalClient // attempts, releases, renewals
	// wait carries the BLPOPs: one holds its connection for up to
	// maxBlock, longer than rdb's read timeout allows.
	wait    redis.UniversalClient
	ttl     time.Duration
	owner   string
	fenced  bool
	closing chan struct{} // closed by Close; ends blocked Acquires
	// waited is whether the last Acquire that got the lock had to wait
	// for it: a hint for how the next one starts (Acquire).
	waited atomic.Bool

	// grantMu orders grants within the Locker, so that the count a grant
	// returns can be compared with the local bookkeeping of earlier ones.
	grantMu sync.Mutex

	mu     sync.Mutex
	holds  map[string]*hold // keys this Locker holds, with their watchdog
	closed bool
	wg     sync.WaitGroup // watchdogs

	// freedKey is the key this Locker's last release freed, pushing a wake
	// token, at freedAt (after the reply: the token was pushed before).
	// Guarded by mu.
	freedKey string
	freedAt  time.Time
}

// Open builds a Locker on the Redis of ep: one server, the master a
// Sentinel group names, or a Redis Cluster (redisclient.Open).
func Open(ep topology.Endpoint, o Options) (*Locker, error) {
	name := plainName
	if o.Fenced {
		name = fencedName
	}
	if o.TTL <= 0 {
		o.TTL = defaultTTL
	}
	id, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(name, "new", impls.ErrBackend, err)
	}
	l := &Locker{
		name:    name,
		ttl:     o.TTL,
		owner:   id + ":" + o.ClientID,
		fenced:  o.Fenced,
		closing: make(chan struct{}),
		holds:   map[string]*hold{},
	}
	if l.rdb, err = redisclient.Open(ep, o.TTL, nil); err != nil {
		return nil, err
	}
	// A wait's connection must outlast its BLPOP and still see a stalled
	// server as an error soon after.
	if l.wait, err = redisclient.Open(ep, o.TTL, func(ro *redis.Options) {
		ro.ReadTimeout += l.maxBlock()
	}); err != nil {
		l.rdb.Close()
		return nil, err
	}
	return l, nil
}

// hold is one generation of this Locker's ownership of a key: from the grant
// that found the key free to the release that deleted it, or to the moment
// we learned it was gone. All leases granted within it share its Lost channel.
type hold struct {
	key     string
	count   int           // leases not yet released; guarded by Locker.mu
	stop    chan struct{} // closed to end the watchdog
	stopped bool          // guarded by Locker.mu
	// start runs the watchdog once the hold has lasted TTL/3; stopped
	// before then, no watchdog ever ran. Guarded by Locker.mu.
	start *time.Timer
	lost  chan struct{}
	once  sync.Once
}

func (h *hold) isLost() bool {
	select {
	case <-h.lost:
		return true
	default:
		return false
	}
}

// stopLocked ends h's watchdog. l.mu must be held.
func (l *Locker) stopLocked(h *hold) {
	if !h.stopped {
		h.stopped = true
		close(h.stop)
		if h.start != nil && h.start.Stop() {
			l.wg.Done() // the watchdog will never run
		}
	}
	if l.holds[h.key] == h {
		delete(l.holds, h.key)
	}
}

// lose records that h's lock is no longer ours and tells the holder.
func (l *Locker) lose(h *hold) {
	l.mu.Lock()
	l.stopLocked(h)
	l.mu.Unlock()
	h.once.Do(func() { close(h.lost) })
}

// drop takes one lease off h; the last one stops the watchdog, whatever the
// server then says, so an ambiguous release can leak the lock for one TTL at
// most and never for as long as the Locker lives. It returns whether that
// was the last lease.
func (l *Locker) drop(h *hold) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.count--; h.count <= 0 {
		l.stopLocked(h)
		return true
	}
	return false
}

// flag is a boolean as the scripts read it.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (l *Locker) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	lease, _, err := l.try(ctx, key)
	return lease, err
}

// Acquire makes one attempt and, while the lock is held, waits until a
// release wakes it or the holder's remaining lease (as the refusal reported
// it) runs out, whichever is first, and tries again (see wake.go). An
// uncontended acquire costs one round trip.
//
// A Locker whose last Acquire had to wait most likely waits again: under
// contention the release it just made woke a waiter, whose attempt ran on
// the server right after the release and took the lock. Such an Acquire
// does not start with a refused attempt. If its own last release freed the
// key less than half a TTL ago, it blocks at once, its attempt behind the
// BLPOP: that release left a token on the wake list (the list lives a TTL),
// and whoever popped it tried the lock in the same step, so a free lock
// finds a token there for it, unless the lock was freed without a release
// (an expired lease), in which case it waits maxBlock at most, as a waiter
// whose token was lost does. Otherwise its first look is a plain PTTL, one
// command where the refused script was two, and a free lock (PTTL -2) is
// taken by the script as usual, a round trip later. A Locker that holds the
// key does neither: its re-entry is granted at once.
func (l *Locker) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	var (
		lease impls.Lease
		wait  time.Duration
		err   error
	)
	if l.waited.Load() && !l.holding(key) {
		if l.freedRecently(key) {
			// Blocks for maxBlock at most.
			wait, err = l.ttl, nil
		} else {
			wait, err = l.look(ctx, key)
		}
		if err == nil {
			err = impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
		} else if errors.Is(err, errFree) {
			lease, wait, err = l.try(ctx, key)
		}
	} else {
		lease, wait, err = l.try(ctx, key)
	}
	waited := false
	for refused(err) {
		waited = true
		lease, wait, err = l.waitAndTry(ctx, key, wait)
	}
	if err == nil {
		l.waited.Store(waited)
	}
	return lease, err
}

// refused reports an attempt that found the lock held, and nothing else:
// a wait that ended with the context is of the context's kind, with the
// refusal before it as its cause.
func refused(err error) bool {
	var e *impls.Error
	return errors.As(err, &e) && e.Kind == impls.ErrHeld
}

// closedErr is what an operation on a closed Locker returns.
func (l *Locker) closedErr() error {
	return impls.Fail(l.name, "acquire", impls.ErrBackend, errors.New("locker closed"))
}

// freedRecently reports whether this Locker's last release freed key less
// than half a TTL ago.
func (l *Locker) freedRecently(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.freedKey == key && time.Since(l.freedAt) < l.ttl/2
}

// holding reports whether this Locker holds key, as far as it knows.
func (l *Locker) holding(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.holds[key]
	return ok
}

// try runs the acquire script once. On ErrHeld it also returns the holder's
// remaining TTL.
func (l *Locker) try(ctx context.Context, key string) (impls.Lease, time.Duration, error) {
	l.grantMu.Lock()
	defer l.grantMu.Unlock()
	if l.isClosing() {
		return nil, 0, l.closedErr()
	}
	sent := time.Now()
	res, err := acquireScriptNow().Run(ctx, l.rdb, l.scriptKeys(key), l.acquireArgs(l.holding(key))...).Int64Slice()
	return l.result(ctx, key, res, err, sent)
}

// scriptKeys and acquireArgs are the acquire script's KEYS and ARGV.
func (l *Locker) scriptKeys(key string) []string {
	return []string{lockKey(key), fenceKey(key), wakeKey(key)}
}

func (l *Locker) acquireArgs(holding bool) []any {
	return []any{l.ttl.Milliseconds(), l.owner, flag(l.fenced), flag(holding)}
}

// result reads an acquire script's reply: a refusal (ErrHeld, with the
// holder's remaining TTL) or a grant, which it records. sent is when the
// attempt was sent: the server's TTL started no earlier. l.grantMu must be
// held, so that grants are recorded in the order the server made them.
func (l *Locker) result(ctx context.Context, key string, res []int64, err error, sent time.Time) (impls.Lease, time.Duration, error) {
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("acquire script returned %v", res)
	}
	if err != nil {
		return nil, 0, impls.Classify(ctx, l.name, "acquire", err, true)
	}
	count, n := res[0], res[1]
	if count == 0 {
		return nil, time.Duration(n) * time.Millisecond, impls.Fail(l.name, "acquire", impls.ErrHeld, nil)
	}

	l.mu.Lock()
	h := l.holds[key]
	if h != nil && count == 1 {
		// We thought we held the key, yet this grant found it free: our
		// earlier grants expired or were deleted on the server. They are
		// lost; this grant starts a new hold.
		l.mu.Unlock()
		l.lose(h)
		l.mu.Lock()
		h = nil
	}
	if h == nil {
		h = &hold{key: key, stop: make(chan struct{}), lost: make(chan struct{})}
		if l.closed {
			// Close already ran: nothing may renew the grant, which then
			// expires after its TTL like any other after Close.
			h.stopped = true
			close(h.stop)
		} else {
			l.holds[key] = h
			// The watchdog starts lazily: most holds end before their
			// first renewal is due, and a timer that is stopped costs
			// neither a goroutine nor the wake-up that ends one. It is
			// due a third of a TTL after the reply, or two thirds after
			// the attempt was sent if that is sooner: an attempt that
			// followed a wait (wake.go) may have been granted any time
			// since it was sent, and the lease runs out a TTL after that
			// at the earliest.
			first := max(0, min(l.ttl/3, time.Until(sent.Add(2*l.ttl/3))))
			l.wg.Add(1)
			h.start = time.AfterFunc(first, func() { l.watch(h, sent) })
		}
	}
	h.count++
	l.mu.Unlock()
	return &lease{l: l, h: h, key: key, token: uint64(n)}, 0, nil
}

// Close stops every watchdog of this Locker without releasing anything and
// closes its connections: to the server this is a crash, and the locks it
// held free themselves one TTL after their last renewal.
func (l *Locker) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.closing)
	for _, h := range l.holds {
		l.stopLocked(h)
	}
	l.mu.Unlock()
	l.wg.Wait()
	// Closing the wait client ends the BLPOPs in progress.
	return errors.Join(l.wait.Close(), l.rdb.Close())
}

// lease is one grant. Re-entries get leases of their own; each Release takes
// one hold off the count.
type lease struct {
	l     *Locker
	h     *hold
	key   string
	token uint64

	mu       sync.Mutex
	dropped  bool // taken off h.count
	last     bool // it was h's last lease when dropped
	released bool
}

func (s *lease) Key() string           { return s.key }
func (s *lease) Lost() <-chan struct{} { return s.h.lost }
func (s *lease) String() string        { return s.key + "#" + strconv.FormatUint(s.token, 10) }

func (s *lease) Token() (uint64, bool) {
	if !s.l.fenced {
		return 0, false
	}
	return s.token, true
}

// Refresh renews the lock once, as a watchdog tick does.
func (s *lease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	released := s.released
	s.mu.Unlock()
	if released || s.h.isLost() {
		// A lost hold's key may since belong to a newer grant of this same
		// Locker, which the owner check alone would not tell apart.
		return impls.Fail(s.l.name, "refresh", impls.ErrNotHeld, nil)
	}
	ok, err := s.l.renew(ctx, s.key)
	if err != nil {
		return impls.Classify(ctx, s.l.name, "refresh", err, true)
	}
	if !ok {
		s.l.lose(s.h)
		return impls.Fail(s.l.name, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

func (s *lease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	if !s.dropped {
		s.dropped = true
		s.last = s.l.drop(s.h)
	}
	if knowsItLost(s.h) {
		s.released = true
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	n, err := releaseScriptNow().Run(ctx, s.l.rdb, []string{lockKey(s.key), wakeKey(s.key)},
		s.l.ttl.Milliseconds(), s.l.owner, flag(s.last), flag(s.l.fenced)).Int64()
	if err != nil {
		err = impls.Classify(ctx, s.l.name, "release", err, true)
		if errors.Is(err, impls.ErrUnknown) {
			// The decrement may have been applied; a retry could take off a
			// second hold, one that another lease of ours still relies on.
			s.released = true
		}
		return err
	}
	s.released = true
	if n == 1 {
		s.l.mu.Lock()
		s.l.freedKey, s.l.freedAt = s.key, time.Now()
		s.l.mu.Unlock()
	}
	if n < 0 {
		s.l.lose(s.h)
		return impls.Fail(s.l.name, "release", impls.ErrNotHeld, nil)
	}
	return nil
}
