package redislock

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

const luaSetNXExpireName = "redis-lua-setnx-expire"

func init() {
	impls.Register(impls.Spec{
		Name: luaSetNXExpireName,
		Summary: "SETNX key token and PEXPIRE key ttl inside one Lua script (004_84007c392b46b35c.txt's " +
			"first fix); owner-checked Lua release and refresh; no fencing tokens",
		Caps:       impls.Capabilities{Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis},
		RoundTrips: impls.RoundTrips{N: 2, Note: "acquire script (SETNX + PEXPIRE), release script"},
		Footprint:  impls.Footprint{Redis: []impls.RedisKey{{Name: "{K}", Type: "string", Expires: true}}},
		Page:       "docs/lessons/02-setnx-then-expire.md",
		Source:     "impls/redislock/lua_setnx_expire.go",
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, luaSetNXExpireName)
			if err != nil {
				return nil, err
			}
			return &LuaSetNXExpire{rdb: rdb, ttl: cfg.TTL}, nil
		},
	})
}

// luaSetNXExpireScript is the acquire of 004_84007c392b46b35c.txt, with its
// unique value: SETNX and EXPIRE, the two commands of redis-setnx-expire,
// run by Redis as one script, so no client sees the key without its
// expiry and a client that dies after sending it leaves either no key or a
// key that expires. PEXPIRE (milliseconds) where the post has EXPIRE
// (seconds), as the lab's TTLs are below a second.
var luaSetNXExpireScript = redis.NewScript(`
if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// LuaSetNXExpire is redis-setnx-expire's two steps made one: the lesson is
// that atomicity, not the command, fixes the deadlock of lesson 2. Release
// and refresh are redis-setnx-px's, owner-checked in one script.
type LuaSetNXExpire struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

func (l *LuaSetNXExpire) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.try(ctx, key)
}

func (l *LuaSetNXExpire) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return impls.Poll(ctx, impls.DefaultBackoff, func(ctx context.Context) (impls.Lease, time.Duration, error) {
		// No hint: the script, like the post's, does not say how long the
		// holder has left.
		lease, err := l.try(ctx, key)
		return lease, 0, err
	})
}

func (l *LuaSetNXExpire) Close() error { return l.rdb.Close() }

func (l *LuaSetNXExpire) try(ctx context.Context, key string) (impls.Lease, error) {
	token, err := impls.NewToken()
	if err != nil {
		return nil, impls.Fail(luaSetNXExpireName, "acquire", impls.ErrBackend, err)
	}
	n, err := luaSetNXExpireAcquire().Run(ctx, l.rdb, []string{lockKey(key)}, token, l.ttl.Milliseconds()).Int64()
	if err != nil {
		return nil, impls.Classify(ctx, luaSetNXExpireName, "acquire", err, true)
	}
	if n == 0 {
		return nil, impls.Fail(luaSetNXExpireName, "acquire", impls.ErrHeld, nil)
	}
	return &tokenLease{
		name: luaSetNXExpireName, rdb: l.rdb, ttl: l.ttl, key: key, token: token,
		release: ownerCheckedRelease,
	}, nil
}
