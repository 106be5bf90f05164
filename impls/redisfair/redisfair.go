// Package redisfair is a first-come-first-served lock on one Redis server.
//
// Waiters queue on the server (a list in arrival order), and each
// waiter proves it is alive by a heartbeat that sets a key of its own to
// expire at its deadline: a waiter killed or frozen in the queue is passed over
// once its deadline passes, never later than half a TTL. A release does not
// free the lock for whoever asks next: in the same script it grants it to
// the oldest live waiter, draws that grant's fencing token, and pushes the
// token onto the waiter's own list, on which the waiter already sleeps in
// BLPOP. The pop is the grant: the waiter holds the lock the moment the
// reply arrives, so a hand-off costs the release's round trip and one push,
// nothing more.
//
// A grant made by a hand-off is a lease of a claim window (half a TTL), not
// of a TTL: Redis delivers the push even to a waiter whose process is
// frozen (SIGSTOP) or whose BLPOP reply sits unread, and such a waiter must
// not keep the line waiting a whole TTL. A live waiter extends it to a TTL
// with a claim sent in the background as it returns, off the hand-off's
// path; a frozen one never sends it, its grant lapses after the window, and
// the next waiter, which learned the window's end on its last heartbeat,
// takes the lock. So a waiter that dies or freezes in line delays the next
// one by at most the claim window, and by nothing once half a TTL has
// passed since its last heartbeat, where Redisson's fair lock waits its
// threadWaitTime (5 s by default) per dead waiter.
//
// A waiter trusts a pop only while the window can still be running: every
// push onto its list comes after its last attempt ran on the server (an
// attempt that finds a grant of ours claims it), so a pop that arrives
// within the window of that attempt's sending is a live lease. A later pop
// (the process was frozen with the reply unread) is claimed in a round trip
// first, and found lapsed if it did.
package redisfair

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

const name = "redis-fair"

// replyMargin is how long before the caller's deadline a wait ends, so its
// reply arrives in time: Redis answers a timed-out BLPOP on its next clock
// tick, up to 100 ms late at the default hz (a 25 ms margin let a
// benchmark's acquire end in a read timeout at its deadline).
const replyMargin = 150 * time.Millisecond

// shortWait is the longest wait slept in the client rather than in a BLPOP:
// two ticks of Redis's clock at the default hz of 10.
const shortWait = 200 * time.Millisecond

func init() {
	impls.Register(impls.Spec{
		Name: name,
		Summary: "FIFO queue on the server with waiter heartbeats; release hands the lock to the oldest live waiter " +
			"in Lua and wakes it with one push (BLPOP); fencing token from an INCR in the granting script",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true, NoPolling: true, Queued: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "acquire script (takes a free lock at once), release script (grants the oldest live waiter, if any)"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "fair:{K}", Type: "string", Expires: true}, {Name: "fair:{K}:fence", Type: "string", IsToken: true}}},
		Page:       "docs/lessons/12-waiting-and-fairness.md",
		Source:     "impls/redisfair/redisfair.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			l, err := Open(cfg.Servers[topology.Redis], cfg.TTL)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return l, nil
		},
	})
}

// keys are the server-side names of one lock. The hash tag keeps them all,
// and the waiters' wake-up lists and heartbeat keys, in one Redis Cluster
// slot, so scripts may touch a waiter's keys by names built from the
// prefixes.
type keys struct {
	lock   string // "<fence> <owner>": the grant's token, and the token of the holder or of the waiter granted
	fence  string // counter of fencing tokens
	queue  string // list: waiter tokens in arrival order
	alive  string // + waiter token: the waiter's heartbeat, a key that expires with its deadline
	prefix string // + waiter token: the waiter's wake-up list
}

func keysOf(key string) keys {
	t := "fair:{" + key + "}"
	return keys{lock: t, fence: t + ":fence", queue: t + ":queue", alive: t + ":alive:", prefix: t + ":wake:"}
}

// run calls a script with the one layout every script here shares.
// KEYS: lock, fence, queue, our heartbeat key, our wake-up list.
// ARGV: our token, ttl ms, claim window ms, waiter deadline ms, wake prefix, mode, heartbeat prefix,
// "1" if no script has seen the token yet (see fresh).
func (k keys) args(l *Locker, token, mode string) ([]string, []any) {
	return []string{k.lock, k.fence, k.queue, k.alive + token, k.prefix + token},
		[]any{token, l.ttl.Milliseconds(), l.claim.Milliseconds(), l.deadline.Milliseconds(), k.prefix, mode, k.alive, "0"}
}

// fresh marks an attempt as the first one ever sent with its token: nobody
// can have handed the lock to a token the server has never seen, so its
// refusal skips the owner check. A retry is never fresh, since the attempt
// it repeats may have queued the token.
func fresh(argv []any, first bool) []any {
	out := append([]any(nil), argv...)
	if first {
		out[7] = "1"
	}
	return out
}

// ownerLua reads and writes the lock: one string, "<fence> <owner>",
// written with its expiry in one SET (a hash of owner and fence took an
// HSET and a PEXPIRE on every grant and every hand-off).
const ownerLua = `
-- lock returns the owner and the fence of the lock's value, nil for a
-- value that is not a grant (absent, or written by something else).
local function lock()
  local v = redis.call('GET', KEYS[1])
  if not v then
    return nil
  end
  local fence, owner = string.match(v, '^(%d+) (.+)$')
  return owner, tonumber(fence)
end
local function grant_to(owner, fence, ms)
  redis.call('SET', KEYS[1], fence .. ' ' .. owner, 'PX', ms)
end
`

// queueLua is the part every script shares: the oldest live waiter, and
// the hand-off to it.
// A waiter is live while its heartbeat key exists: each heartbeat sets it
// with the waiter's deadline as its expiry, so Redis itself forgets a
// waiter that went silent, and telling a live waiter from a dead one is one
// EXISTS, with no clock to read and nothing to remove (a sorted set of
// deadlines cost a TIME, a ZSCORE and a ZREM per hand-off).
// The hand-off writes the waiter's token as the owner for the claim window
// only: until the waiter claims, the grant is a reservation that lapses by
// itself if the waiter is dead or frozen.
const queueLua = ownerLua + `
local function alive(token)
  return redis.call('EXISTS', ARGV[7] .. token) == 1
end
-- live_head is the oldest waiter whose heartbeat has not lapsed. The dead
-- ones before it leave the queue here; those further back stay until they
-- reach the head, which no decision needs sooner.
local function live_head()
  while true do
    local head = redis.call('LINDEX', KEYS[3], 0)
    if not head then
      return nil
    end
    if alive(head) then
      return head
    end
    redis.call('LPOP', KEYS[3])
  end
end
-- The fencing counter is ordinary data: a garbled one is an error before
-- anything is written, never a grant with a token that is no token.
local function next_fence()
  local fence = redis.call('INCR', KEYS[2])
  if fence < 1 then
    return redis.error_reply('fencing counter ' .. KEYS[2] .. ' is not positive: ' .. fence)
  end
  return fence
end
-- grant answers a grant of ours. In mode "cycle" a BLPOP on our own list
-- follows in the same pipeline and must not block: the fence goes there too.
local function grant(fence)
  if ARGV[6] == 'cycle' then
    redis.call('RPUSH', KEYS[5], fence)
    redis.call('PEXPIRE', KEYS[5], ARGV[2])
  end
  return {1, fence}
end
-- handoff grants the lock to the oldest live waiter, if any, and returns
-- whether it did; the caller has checked that the lock is ours or free.
-- The waiter leaves the queue by the LPOP that finds it (the dead ones
-- before it with it); its heartbeat key expires by itself.
local function handoff()
  local head
  while true do
    head = redis.call('LPOP', KEYS[3])
    if not head then
      return false
    end
    if alive(head) then
      break
    end
  end
  local fence = next_fence()
  if type(fence) == 'table' then
    -- Nothing written: the waiter keeps its place.
    redis.call('LPUSH', KEYS[3], head)
    return fence
  end
  -- The lock is ours or gone: its value is overwritten.
  grant_to(head, fence, ARGV[3])
  local wake = ARGV[5] .. head
  redis.call('RPUSH', wake, fence)
  redis.call('PEXPIRE', wake, ARGV[3])
  return true
end
`

// acquireScript is one attempt, and a waiter's heartbeat. It grants when
// the lock was handed to us (the claim: the reservation becomes a lease of
// a full TTL), or when it is free and nobody live waits before us. A free
// lock with an older waiter asleep (its holder expired, or a reservation
// lapsed) is handed to that waiter. Otherwise, in the waiting modes, we
// join the queue if we are not in it and set our heartbeat key again.
//
// It returns {1, fence} for a grant and {0, pttl} otherwise: a refusal can
// never be read as a grant, since a grant's flag is 1 and a fence is >= 1.
// Mode "cycle" also pushes the fence onto our own wake-up list on a grant,
// because a BLPOP on it follows in the same pipeline and must not block.
// The PTTL read first is the existence check and, on a refusal, the answer:
// a waiter's first refusal, the contended hot path, is PTTL and the two
// writes that queue it and start its heartbeat (a later one reads the
// owner too, as the lock may have been handed to it). The queue is a list,
// in arrival order by construction: a sorted set by arrival time needed the
// server's clock (TIME) on every refusal.
var acquireScript = redis.NewScript(queueLua + `
local fence = nil
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 and redis.call('EXISTS', KEYS[3]) == 0 then
  -- The uncontended path: free, and nobody in line (an empty list does
  -- not exist), so no queue to leave.
  fence = next_fence()
  if type(fence) == 'table' then
    return fence
  end
  grant_to(ARGV[1], fence, ARGV[2])
  if ARGV[6] == 'cycle' then
    redis.call('DEL', KEYS[5])
  end
  return grant(fence)
end
local owner, granted = nil, nil
if pttl ~= -2 and ARGV[8] ~= '1' then
  owner, granted = lock()
end
if owner and owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  fence = granted
  redis.call('DEL', KEYS[5])
elseif pttl == -2 then
  -- Free means no key at all: a value that is not our grant (written by
  -- hand, or by something else) is somebody's, and is left alone.
  local head = live_head()
  if not head or head == ARGV[1] then
    fence = next_fence()
    if type(fence) == 'table' then
      return fence
    end
    grant_to(ARGV[1], fence, ARGV[2])
    if head then
      redis.call('LPOP', KEYS[3])
    end
    redis.call('DEL', KEYS[4])
    redis.call('DEL', KEYS[5])
  else
    local err = handoff()
    if type(err) == 'table' then
      return err
    end
    -- Handed to the head: reserved for the claim window.
    pttl = tonumber(ARGV[3])
  end
end
if fence then
  return grant(fence)
end
if ARGV[6] ~= 'try' then
  -- A fresh token is in no queue: it joins at the back. A later attempt
  -- is a heartbeat, which keeps our place: a waiter whose heartbeat key
  -- still existed is in line (or was handed the lock, seen above), and
  -- only one whose key lapsed looks for itself, since a hand-off may have
  -- passed it over as dead.
  if ARGV[8] == '1' then
    redis.call('SET', KEYS[4], '1', 'PX', ARGV[4])
    redis.call('RPUSH', KEYS[3], ARGV[1])
  elseif not redis.call('SET', KEYS[4], '1', 'PX', ARGV[4], 'GET') and
      not redis.call('LPOS', KEYS[3], ARGV[1]) then
    redis.call('RPUSH', KEYS[3], ARGV[1])
  end
end
return {0, pttl}
`)

// releaseScript deletes the lock only if we own it, and hands it on to the
// oldest live waiter in the same step. 1: released, 0: not ours.
var releaseScript = redis.NewScript(queueLua + `
if lock() ~= ARGV[1] then
  return 0
end
-- Nobody in line costs one LPOP.
local handed = handoff()
if type(handed) == 'table' then
  return handed
end
if not handed then
  redis.call('DEL', KEYS[1])
end
return 1
`)

// refreshScript extends the lease only while we own it: an expired lock
// has no owner, so a refresh never revives it.
var refreshScript = redis.NewScript(ownerLua + `
if lock() == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// leaveScript takes an abandoned wait out of the queue. If the lock was
// handed to us meanwhile, it passes it on at once rather than let the
// reservation lapse. 1: we had been granted and passed it on.
var leaveScript = redis.NewScript(queueLua + `
redis.call('LREM', KEYS[3], 0, ARGV[1])
redis.call('DEL', KEYS[4])
redis.call('DEL', KEYS[5])
if lock() == ARGV[1] then
  local handed = handoff()
  if type(handed) == 'table' then
    return handed
  end
  if not handed then
    redis.call('DEL', KEYS[1])
  end
  return 1
end
return 0
`)

// Locker is one client of the fair lock.
type Locker struct {
	rdb redis.UniversalClient // attempts, releases, refreshes
	// wait carries the waits: a BLPOP holds its connection for up to a
	// heartbeat, longer than rdb's read timeout allows.
	wait redis.UniversalClient
	ttl  time.Duration
	// heartbeat is the longest a waiter sleeps between attempts; deadline
	// is how long after its last attempt a silent waiter drops out (a
	// heartbeat missed); claim is the lease a hand-off grants until the
	// woken waiter claims a whole TTL. All derive from the TTL, so a dead
	// waiter in the queue delays the next one by at most the claim window,
	// half the TTL (the next waiter learns when it ends on a heartbeat,
	// which comes sooner).
	heartbeat, deadline, claim time.Duration
	// trust is how long after an attempt was sent a pop is taken as a live
	// grant without a round trip, and claimAfter how long after the pop a
	// holder still holding claims its TTL: together half the claim window
	// and an eighth, leaving three eighths for the claim to reach the
	// server through a late timer or a slow round trip.
	trust, claimAfter time.Duration
	// queued is whether the last Acquire was handed the lock by a release
	// (it waited in line): a hint for how the next one starts.
	queued    atomic.Bool
	opTimeout time.Duration // bound of the clean-up of an abandoned wait

	mu     sync.Mutex
	closed bool
	waits  sync.WaitGroup // Acquires in progress, which Close lets leave the queue
}

// New builds a client of the lock on the Redis server at addr.
func New(addr string, ttl time.Duration) *Locker {
	l, err := Open(topology.Endpoint{Kind: topology.Redis, Addrs: []string{addr}}, ttl)
	if err != nil {
		panic(err) // one plain address always opens
	}
	return l
}

// Open builds a client of the lock on the Redis of ep: one server, or the
// master a Sentinel group names (redisclient.Open).
func Open(ep topology.Endpoint, ttl time.Duration) (*Locker, error) {
	rdb, err := redisclient.Open(ep, ttl, nil)
	if err != nil {
		return nil, err
	}
	l := &Locker{
		rdb: rdb, ttl: ttl,
		heartbeat: ttl / 4, deadline: ttl / 2, claim: ttl / 2,
	}
	l.trust, l.claimAfter = l.claim/2, l.claim/8
	l.opTimeout = max(ttl/4, 100*time.Millisecond)
	// The waits' connections must outlast a heartbeat's BLPOP and still
	// see a stalled server as an error soon after it. The pool stays
	// Open's: a smaller one trips go-redis's dial breaker sooner
	// (redisclient.Options), and a waiter that did so at a restart came
	// back a second later, with the lab's whole lease gone.
	if l.wait, err = redisclient.Open(ep, ttl, func(o *redis.Options) {
		o.ReadTimeout, o.WriteTimeout = l.heartbeat+l.opTimeout, l.opTimeout
	}); err != nil {
		rdb.Close()
		return nil, err
	}
	// Dial the wait connection now, in the background, so that a client's
	// first wait does not pay for a dial and a handshake while the line
	// behind it waits too. A failure here is only a connection not warmed.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		l.wait.Ping(ctx)
	}()
	return l, nil
}

// Close ends the Acquires in progress and closes both clients. Leases still
// held are not released. A waiting Acquire leaves the queue on its way out
// (closing the wait client ends its BLPOP; the other client, still open,
// carries the leave), so a closed client never stands in line, nor is
// handed a lock it will never claim.
func (l *Locker) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	werr := l.wait.Close()
	l.waits.Wait()
	return errors.Join(l.rdb.Close(), werr)
}

// reply decodes an acquire script's {flag, value}.
func reply(v any) (granted bool, value int64, err error) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return false, 0, fmt.Errorf("unexpected reply %v", v)
	}
	flag, ok1 := a[0].(int64)
	value, ok2 := a[1].(int64)
	if !ok1 || !ok2 || (flag != 0 && flag != 1) || (flag == 1 && value < 1) {
		return false, 0, fmt.Errorf("unexpected reply %v", v)
	}
	return flag == 1, value, nil
}

// TryAcquire grants only when the lock is free and nobody live is queued.
func (l *Locker) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	token, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, err)
	}
	k := keysOf(key)
	ks, argv := k.args(l, token, "try")
	v, err := acquireScript.Run(ctx, l.rdb, ks, argv...).Result()
	if err != nil {
		return nil, impls.Classify(ctx, name, "acquire", err, true)
	}
	granted, fence, err := reply(v)
	if err != nil {
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, err)
	}
	if !granted {
		return nil, impls.Fail(name, "acquire", impls.ErrHeld, nil)
	}
	return &lease{l: l, key: key, k: k, token: token, fence: uint64(fence)}, nil
}

// Acquire joins the queue and sleeps on the wake-up list until the lock is
// handed over (or expires with nobody live before us). A pop in time is the
// grant itself. Every other wake-up, by the heartbeat's timeout or a pop
// too late to trust, is one pipeline on the wait client: the attempt, then
// the next BLPOP, which returns at once on a grant since the attempt pushed
// its own fence.
func (l *Locker) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, redis.ErrClosed)
	}
	l.waits.Add(1)
	l.mu.Unlock()
	defer l.waits.Done()
	token, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(name, "acquire", impls.ErrBackend, err)
	}
	k := keysOf(key)
	fail := func(err error) (impls.Lease, error) {
		l.leave(ctx, k, token)
		return nil, err
	}
	ks, argv := k.args(l, token, "first")
	// tokenUsed is whether an attempt with this token went out (see fresh).
	tokenUsed := false
	// attempted is when the last attempt was sent. Every push onto our
	// list comes after that attempt ran on the server, so a hand-off
	// popped before attempted + trust is a grant still in its window.
	attempted := time.Now()
	var (
		granted bool
		value   int64
	)
	// first: no attempt goes with the first BLPOP, one was just made.
	first := !l.queued.Load()
	if first {
		tokenUsed = true
		v, err := acquireScript.Run(ctx, l.rdb, ks, fresh(argv, true)...).Result()
		if err != nil {
			return fail(impls.Classify(ctx, name, "acquire", err, true))
		}
		granted, value, err = reply(v)
		if err != nil {
			return fail(impls.Fail(name, "acquire", impls.ErrBackend, err))
		}
	}
	// A client whose last Acquire waited in line most likely will again:
	// its first attempt goes in the pipeline of its first BLPOP (as every
	// later one does), saving a round trip of its own. A grant there costs
	// a push and a pop more than the attempt alone, so a client that found
	// the lock free goes back to the plain attempt.
	handedOver := false
	defer func() { l.queued.Store(handedOver) }()
	ks, argv = k.args(l, token, "cycle")
	wake := k.prefix + token
	// expires is when the current lease (or reservation) runs out, as of
	// the last attempt: the attempt ran when its pipeline was sent, so the
	// clock starts there, not at the reply, which comes after the BLPOP.
	expires := func(sent time.Time, pttl int64) time.Time {
		if pttl <= 0 {
			return time.Time{}
		}
		return sent.Add(time.Duration(pttl) * time.Millisecond)
	}
	until := expires(time.Now(), value)
	// A cycle cut by the network (a read timeout after our process was
	// frozen, say) is retried once: every attempt carries the same token,
	// so the retry answers what the cut one did, grant or not.
	retried := false
	for !granted {
		sleep := l.heartbeat
		if !until.IsZero() {
			left := time.Until(until)
			if left < shortWait {
				// The lease ends soon. Redis times out a blocked client
				// only on its clock tick (every 100 ms at the default hz),
				// which would add up to a tick to the recovery from a dead
				// holder, so a short wait is slept here; a hand-off pushed
				// meanwhile is claimed by the attempt that follows.
				t := time.NewTimer(max(left, 0) + time.Millisecond)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return fail(impls.Fail(name, "acquire", impls.ContextErr(ctx), nil))
				}
				first = false
			} else {
				// Nobody releases an expired lock: the oldest waiter must
				// look when it runs out. The BLPOP ends half a short wait
				// early, so that even a timeout Redis serves a tick late
				// leaves less than a short wait, which is slept above: a
				// BLPOP timed to the expiry itself ended up to 100 ms after
				// it, and the recovery from a killed holder came out past
				// its TTL.
				sleep = min(sleep, left-shortWait/2)
			}
		}
		if dl, ok := ctx.Deadline(); ok {
			// The reply must be back before the deadline, or go-redis
			// drops the connection mid-read.
			left := time.Until(dl) - replyMargin
			if left <= 0 {
				<-ctx.Done()
				return fail(impls.Fail(name, "acquire", impls.ContextErr(ctx), nil))
			}
			sleep = min(sleep, left)
		}
		sent := time.Now()
		pipe := l.wait.Pipeline()
		var attempt *redis.Cmd
		if !first {
			attempt = acquireScript.EvalSha(ctx, pipe, ks, fresh(argv, !tokenUsed)...)
			tokenUsed = true
		}
		pop := pipe.Do(ctx, "blpop", wake, strconv.FormatFloat(sleep.Seconds(), 'f', 3, 64))
		_, err := pipe.Exec(ctx)
		first, until = false, time.Time{}
		if err != nil && !errors.Is(err, redis.Nil) {
			if attempt != nil && attempt.Err() != nil && strings.HasPrefix(attempt.Err().Error(), "NOSCRIPT") {
				// The server restarted and forgot the script: load it and
				// go round again (the BLPOP behind it slept in vain).
				if lerr := acquireScript.Load(ctx, l.wait).Err(); lerr != nil {
					return fail(impls.Classify(ctx, name, "acquire", lerr, false))
				}
				continue
			}
			if !retried && impls.ContextErr(ctx) == nil && !l.isClosed() {
				retried = true
				continue
			}
			return fail(impls.Classify(ctx, name, "acquire", err, true))
		}
		retried = false
		if attempt != nil {
			attempted = sent
			granted, value, err = reply(attempt.Val())
			if err != nil {
				return fail(impls.Fail(name, "acquire", impls.ErrBackend, err))
			}
			if !granted {
				until = expires(sent, value)
			}
		}
		if !granted && pop.Err() == nil {
			// A hand-off: the lock is ours for the claim window.
			fence, err := popped(pop.Val())
			if err != nil {
				return fail(impls.Fail(name, "acquire", impls.ErrBackend, err))
			}
			if time.Since(attempted) < l.trust {
				handedOver = true
				s := &lease{l: l, key: key, k: k, token: token, fence: uint64(fence)}
				s.claim = time.AfterFunc(l.claimAfter, s.claimTTL)
				return s, nil
			}
			// Popped late (our process stalled with the reply unread):
			// the window may be over. The next attempt claims the grant
			// if it is still ours, or finds it lapsed and waits again.
			until = time.Time{}
			continue
		}
		if cerr := impls.ContextErr(ctx); cerr != nil && !granted {
			return fail(impls.Fail(name, "acquire", cerr, nil))
		}
	}
	return &lease{l: l, key: key, k: k, token: token, fence: uint64(value)}, nil
}

// popped decodes a BLPOP reply, [list, fence].
func popped(v any) (int64, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return 0, fmt.Errorf("unexpected wake-up %v", v)
	}
	s, ok := a[1].(string)
	if !ok {
		return 0, fmt.Errorf("unexpected wake-up %v", v)
	}
	fence, err := strconv.ParseInt(s, 10, 64)
	if err != nil || fence < 1 {
		return 0, fmt.Errorf("wake-up carries %q, not a fencing token", s)
	}
	return fence, nil
}

// claimTTL extends a lease granted by a hand-off from the claim window to
// a TTL, off the hand-off's path: the holder already holds the lock. It
// runs on a timer that the release stops, so a holder done within an
// eighth of the window (every contended benchmark pair) never sends it.
// The claim only extends a lease still ours (refreshScript), so one that
// arrives after our release, or after the window lapsed, changes nothing.
// If it never arrives (the process frozen or the server unreachable), the
// lease ends with the window.
func (s *lease) claimTTL() {
	ctx, cancel := context.WithTimeout(context.Background(), s.l.opTimeout)
	defer cancel()
	ks, argv := s.k.args(s.l, s.token, "claim")
	refreshScript.Run(ctx, s.l.rdb, ks, argv...)
}

func (l *Locker) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// leave cleans up an abandoned wait, on a context of its own since the
// caller's may be what ended the wait. If it fails, the server cleans up
// anyway: our deadline lapses and an unclaimed grant expires.
func (l *Locker) leave(ctx context.Context, k keys, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opTimeout)
	defer cancel()
	ks, argv := k.args(l, token, "leave")
	leaveScript.Run(ctx, l.rdb, ks, argv...)
}

type lease struct {
	l     *Locker
	key   string
	k     keys
	token string
	fence uint64

	mu       sync.Mutex
	released bool
	// claim is the timer of the claim of a hand-off's lease, nil for a
	// lease granted a whole TTL at once.
	claim *time.Timer
}

func (s *lease) Key() string           { return s.key }
func (s *lease) Token() (uint64, bool) { return s.fence, true }
func (s *lease) String() string        { return s.key + "#" + strconv.FormatUint(s.fence, 10) }

// never is the Lost channel: the lock has no renewal, so it cannot learn
// of a loss.
var never = make(chan struct{})

func (s *lease) Lost() <-chan struct{} { return never }

func (s *lease) Refresh(ctx context.Context) error {
	ks, argv := s.k.args(s.l, s.token, "refresh")
	n, err := refreshScript.Run(ctx, s.l.rdb, ks, argv...).Int64()
	if err != nil {
		return impls.Classify(ctx, name, "refresh", err, true)
	}
	if n == 0 {
		return impls.Fail(name, "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

func (s *lease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return impls.Fail(name, "release", impls.ErrNotHeld, nil)
	}
	ks, argv := s.k.args(s.l, s.token, "release")
	n, err := releaseScriptNow().Run(ctx, s.l.rdb, ks, argv...).Int64()
	if err != nil {
		return impls.Classify(ctx, name, "release", err, true)
	}
	s.released = true
	if s.claim != nil {
		s.claim.Stop()
	}
	if n == 0 {
		return impls.Fail(name, "release", impls.ErrNotHeld, nil)
	}
	return nil
}
