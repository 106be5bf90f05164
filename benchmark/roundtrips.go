package benchmark

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/impls"
)

// RoundTrips is the number of sequential round trips one uncontended
// acquire-release pair costs, as declared here from reading each lock's
// code (not measured). Requests a lock sends to several nodes in parallel
// count once. The report divides the backend's one-client round-trip rate
// by this number to get the bound the lock is compared with.
type RoundTrips struct {
	N    int
	Note string
}

// declaredRoundTrips covers the locks known when this was written. A lock
// missing here gets its backend's default below, and the report says so.
var declaredRoundTrips = map[string]RoundTrips{
	"redis-setnx-px":         {2, "acquire script (SET NX PX + INCR), release script (GET + DEL)"},
	"redis-del-release":      {2, "acquire script, DEL"},
	"redis-get-del-release":  {3, "acquire script, GET, DEL"},
	"redis-getset":           {2, "SETNX, DEL (GETSET only when taking over an expired lock)"},
	"redis-setnx-expire":     {3, "SETNX, PEXPIRE, release script"},
	"redis-reentrant":        {2, "acquire script, release script (pub/sub only when waiting)"},
	"redis-reentrant-fenced": {2, "acquire script, release script (pub/sub only when waiting)"},
	"redlock":                {2, "SET NX PX on every node in parallel, release script on every node in parallel"},
	"zookeeper":              {3, "create ephemeral sequential, getChildren, delete"},
	"pg-advisory":            {2, "pg_advisory_lock, pg_advisory_unlock"},
	"pg-optimistic":          {2, "INSERT ... ON CONFLICT DO UPDATE, conditioned release"},
	"pg-unique-insert":       {2, "INSERT, DELETE"},
	"peer-redislock":         {2, "obtain script, release script"},
	"peer-redsync":           {2, "SET NX PX, release script"},
	"peer-redsync-5":         {2, "SET NX PX on 5 nodes in parallel, release script on 5 nodes in parallel"},
	"peer-zk-lock":           {3, "create protected ephemeral sequential, getChildren, delete"},
}

// backendDefault is used for locks not declared above.
var backendDefault = map[string]RoundTrips{
	BackendRedis:     {2, "default for Redis: one request to acquire, one to release"},
	BackendZooKeeper: {3, "default for ZooKeeper: create, getChildren, delete"},
	BackendPostgres:  {2, "default for PostgreSQL: one statement to acquire, one to release"},
}

// roundTripsOf returns the declared round trips and whether they were
// declared for this lock by name (false: the backend's default).
func roundTripsOf(s impls.Spec) (RoundTrips, bool) {
	if rt, ok := declaredRoundTrips[s.Name]; ok {
		return rt, true
	}
	return backendDefault[backendOf(s)], false
}

// backendOf names the servers a lock uses.
func backendOf(s impls.Spec) string {
	switch {
	case s.Backend.RedisNodes > 0:
		return BackendRedis
	case s.Backend.ZooKeeper:
		return BackendZooKeeper
	case s.Backend.Postgres:
		return BackendPostgres
	}
	return BackendInProcess
}

// closestPeer picks the peer library a lock is compared with: same backend,
// then the nearest number of Redis nodes (a one-node lock is compared with a
// one-node peer, Redlock with five-node Redsync), then by name. Peers and
// in-process locks have no closest peer.
func closestPeer(s impls.Spec, among []impls.Spec) (impls.Spec, bool) {
	if s.Peer || backendOf(s) == BackendInProcess {
		return impls.Spec{}, false
	}
	var cands []impls.Spec
	for _, p := range among {
		if p.Peer && backendOf(p) == backendOf(s) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return impls.Spec{}, false
	}
	dist := func(p impls.Spec) int {
		d := p.Backend.RedisNodes - s.Backend.RedisNodes
		if d < 0 {
			d = -d
		}
		return d
	}
	slices.SortStableFunc(cands, func(a, b impls.Spec) int {
		if da, db := dist(a), dist(b); da != db {
			return da - db
		}
		return strings.Compare(a.Name, b.Name)
	})
	return cands[0], true
}
