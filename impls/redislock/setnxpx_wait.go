package redislock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/redisclient"
	"github.com/locklab/locklab/topology"
)

const setnxPXWaitName = "redis-setnx-px-wait"

// waitReplicas is how many replicas must acknowledge a grant. One: Sentinel
// promotes the reachable replica with the most replication done, so one
// acknowledgement is what keeps a grant through a fail-over of a master
// with its replicas around it; asking for every replica would make the lock
// unavailable whenever one replica is down, which is a different lock.
const waitReplicas = 1

// waitTimeoutOf is how long WAIT may block for a lease of ttl: an eighth of
// it, under the client's read timeout (a quarter, redisclient.Options), so
// a WAIT that times out is answered, not cut off; replication on a healthy
// group takes well under a millisecond.
func waitTimeoutOf(ttl time.Duration) time.Duration { return max(ttl/8, 10*time.Millisecond) }

func init() {
	impls.Register(impls.Spec{
		Name: setnxPXWaitName,
		Summary: "redis-setnx-px, then WAIT 1 replica for an eighth of the lease after every grant: a grant the replica has " +
			"not acknowledged is released and reported as a backend failure",
		Caps:       impls.Capabilities{Fencing: true, Expiry: true},
		Backend:    impls.Backend{Kind: topology.Redis, Replicas: true},
		RoundTrips: impls.RoundTrips{N: 3, Note: "acquire script (SET NX PX + INCR), WAIT 1 replica, release script (GET + DEL)"},
		Footprint:  impls.Footprint{Redis: setnxKeys}, // redis-setnx-px's keys; the WAIT leaves nothing
		Page:       "docs/lessons/07-redis-failover.md",
		Source:     "impls/redislock/setnxpx_wait.go",
		Failpoints: []string{failpoint.BeforeWait},
		New: func(cfg impls.Config) (impls.Locker, error) {
			rdb, err := client(cfg, setnxPXWaitName)
			if err != nil {
				return nil, err
			}
			return NewSetNXPXWait(rdb, cfg.TTL, cfg.Hit), nil
		},
	})
}

// NewSetNXPXWait is redis-setnx-px whose every grant waits for a replica's
// acknowledgement (WAIT numreplicas timeout) before it is handed out. hit
// is called at failpoint.BeforeWait, between the grant and the WAIT.
//
// A grant the WAIT finds short is released (owner-checked) and the acquire
// fails with ErrBackend: the server granted, but the lock cannot say the
// grant would survive a fail-over, so it does not hand it out. It is not
// ErrHeld (nobody else holds it) and not ErrUnknown (the lock knows what
// happened, and gave the key back). Only when the release itself fails is
// the outcome unknown: the key may stand on the master until its PX runs
// out. WAIT does not make Redis consistent (a replica that acknowledged can
// still be the one not promoted, and a write acknowledged by one replica
// can be lost in a later fail-over); it closes the window of a grant lost
// in the replication lag of a master that dies at once.
//
// The acquire script and the WAIT go on one connection to the key's
// master (keyMaster): a WAIT counts only the writes sent before it on its
// own connection, and names no key, so a Redis Cluster client would send
// it to any master, which waits for its own replica, not the key's (the
// benchmark counted 2.34 round trips per pair on the key's master, not 3).
func NewSetNXPXWait(rdb redis.UniversalClient, ttl time.Duration, hit func(string)) *SetNXPX {
	return newWaiting(rdb, ttl, hit, setnxPXWaitName, func(context.Context, *redis.Conn) (int64, error) { return waitReplicas, nil })
}

// newWaiting is redis-setnx-px whose every grant waits, on the key's
// master, for as many replicas as want says (asked on the grant's
// connection, after it) to acknowledge it; name is the lock's registered
// name.
func newWaiting(rdb redis.UniversalClient, ttl time.Duration, hit func(string), name string,
	want func(context.Context, *redis.Conn) (int64, error)) *SetNXPX {
	l := &SetNXPX{rdb: rdb, ttl: ttl, name: name}
	timeout := waitTimeoutOf(ttl)
	l.acquire = func(ctx context.Context, key, token string) (bool, int64, error) {
		master, err := keyMaster(ctx, rdb, lockKey(key))
		if err != nil {
			// Nothing was sent: at most the cluster's slot map was asked for.
			return false, 0, impls.Classify(ctx, name, "acquire", err, false)
		}
		conn := master.Conn()
		defer conn.Close()
		granted, n, err := runAcquire(ctx, setnxAcquireScript(), conn, key, token, ttl)
		if err != nil {
			return false, 0, redirected(ctx, rdb, name, err)
		}
		if !granted {
			return false, n, nil
		}
		if hit != nil {
			hit(failpoint.BeforeWait)
		}
		// How many replicas to wait for is asked after the grant, on its
		// connection: a failure to ask is one more way the grant goes
		// unconfirmed (and a stalled server's answer to a request sent
		// after the grant's leaves the grant's fate unknown, as a WAIT's).
		replicas, short := want(ctx, conn)
		if short == nil {
			w, err := waitRoute(rdb, conn).Do(ctx, "wait", replicas, timeout.Milliseconds()).Int64()
			short = waitShortfall(replicas, w, err)
		}
		if short == nil {
			return true, n, nil
		}
		// Given back on the server that granted, on a connection of its
		// own: the pinned one is broken if the WAIT's reply was cut off.
		// Should that server no longer master the slot (MOVED), the grant
		// may live on in the replica promoted in its place: unknown.
		rel, rerr := redisclient.ReleaseScript.Run(context.WithoutCancel(ctx), master, []string{lockKey(key)}, token).Int64()
		if rerr != nil {
			return false, 0, impls.Fail(name, "acquire", impls.ErrUnknown,
				fmt.Errorf("%w; giving the grant back failed too: %w", short, rerr))
		}
		return false, 0, impls.Fail(name, "acquire", impls.ErrBackend,
			fmt.Errorf("%w; the grant was given back (%d key deleted)", short, rel))
	}
	return l
}

// commandSender is what a WAIT can be sent on: the pinned connection
// (*redis.Conn), or the client (a redis.UniversalClient), which picks a
// connection of its own.
type commandSender interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// replicaShortfall says why a WAIT's answer does not confirm a grant: an
// error, or fewer replicas than the want asked for within the timeout.
func replicaShortfall(want, n int64, err error) error {
	if err != nil {
		return fmt.Errorf("WAIT %d: %w", want, err)
	}
	if n < want {
		return fmt.Errorf("WAIT %d: %d replicas acknowledged the grant in time", want, n)
	}
	return nil
}
