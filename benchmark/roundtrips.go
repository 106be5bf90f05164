package benchmark

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// RoundTrips is the number of sequential round trips one uncontended
// acquire-release pair costs, as declared here from reading each lock's
// code. The run counts them from the servers' own counters (see
// countRoundTrips) and the bound uses the count; the declaration is what a
// reader expects, and TestDeclaredRoundTripsMatchServerCounters fails when
// the two disagree. Requests a lock sends to several nodes in parallel
// count once.
type RoundTrips struct {
	N    int
	Note string
}

// countedAs is what the server's counter sees per pair for a lock where it
// does not count round trips: PostgreSQL counts transactions, and a lock
// held by an open transaction sends several statements in one. The
// declaration is then checked against this, and the bound divides by the
// declared round trips.
var countedAs = map[string]int{
	"pg-for-update": 2, // the INSERT's transaction and the lock's
}

// declaredRoundTrips: every server-backed lock must be declared here.
var declaredRoundTrips = map[string]RoundTrips{
	"redis-setnx-px":           {2, "acquire script (SET NX PX + INCR), release script (GET + DEL)"},
	"redis-setnx-px-wait":      {3, "acquire script (SET NX PX + INCR), WAIT 1 replica, release script (GET + DEL)"},
	"redis-del-release":        {2, "acquire script, DEL"},
	"redis-get-del-release":    {3, "acquire script, GET, DEL"},
	"redis-getset":             {2, "SETNX, DEL (GETSET only when taking over an expired lock)"},
	"redis-setnx-expire":       {3, "SETNX, PEXPIRE, release script"},
	"redis-lua-setnx-expire":   {2, "acquire script (SETNX + PEXPIRE), release script"},
	"redis-getset-own-expiry":  {2, "SETNX, DEL (GETSET only when taking over an expired lock; no DEL once the holder's own expiry passed)"},
	"redis-reentrant":          {2, "acquire script, release script (a BLPOP only when waiting)"},
	"redis-reentrant-fenced":   {2, "acquire script, release script (a BLPOP only when waiting)"},
	"redis-fair":               {2, "acquire script (takes a free lock at once), release script (grants the oldest live waiter, if any)"},
	"redlock":                  {2, "SET NX PX on every node in parallel, release script on every node in parallel"},
	"zookeeper":                {3, "create ephemeral sequential, getChildren (its directory's czxid + the sequence: the fencing token), delete"},
	"pg-advisory":              {2, "pg_advisory_lock, pg_advisory_unlock"},
	"pg-optimistic":            {2, "INSERT ... ON CONFLICT DO UPDATE, conditioned release"},
	"pg-unique-insert":         {2, "INSERT, DELETE"},
	"pg-for-update":            {4, "INSERT ... ON CONFLICT DO NOTHING of the key's row, BEGIN, SELECT ... FOR UPDATE, COMMIT (two transactions: the INSERT's and the lock's)"},
	"mysql-get-lock":           {2, "GET_LOCK, RELEASE_LOCK"},
	"mysql-lock-table":         {2, "INSERT, DELETE"},
	"mysql-optimistic":         {2, "conditional UPDATE (an INSERT IGNORE only for a key's first grant), conditioned release"},
	"mysql-for-update":         {5, "INSERT IGNORE of the key's row (no lock wait), START TRANSACTION, SELECT ... FOR UPDATE, SELECT @@in_transaction, COMMIT"},
	"peer-redislock":           {2, "obtain script, release script"},
	"peer-redsync":             {2, "SET NX PX, release script"},
	"peer-redsync-5":           {2, "SET NX PX on 5 nodes in parallel, release script on 5 nodes in parallel"},
	"peer-zk-lock":             {3, "create protected ephemeral sequential, getChildren, delete"},
	"etcd-lock":                {2, "transaction putting the key when absent and reading the line's head, transaction deleting the key at its create revision (the lease is granted once per client)"},
	"guest:redis-py":           {2, "Lock.acquire's SET NX PX, Lock.release's script (EVALSHA)"},
	"guest:node-redlock":       {2, "redlock's acquire script, its release script"},
	"guest:node-redlock-5":     {2, "redlock's acquire script on 5 nodes in parallel, its release script on 5 nodes in parallel"},
	"guest:node-redisson":      {3, "Redisson's lock script, its unlock script (which publishes to waiters), a DEL of the unlock latch"},
	"guest:lab-redis-setnx-px": {2, "the wrapped redis-setnx-px's acquire script (SET NX PX + INCR), its release script (GET + DEL)"},
	"guest:curator":            {4, "create ephemeral sequential, getChildren, the adapter's read of the lock directory's czxid (the fencing token; Curator issues none), delete"},
	"peer-etcd-mutex":          {3, "Mutex's transaction (put when absent, read the head), the adapter's ownership check (a transaction with a read), Unlock's delete"},
}

// backendOf names the servers a lock uses: its server kind.
func backendOf(s impls.Spec) string {
	if s.Backend.InProcess || s.Backend.Kind == "" {
		return BackendInProcess
	}
	return string(s.Backend.Kind)
}

// redisNodes is how many independent Redis nodes a lock uses (0: none).
func redisNodes(s impls.Spec) int {
	if s.Backend.Kind != topology.Redis {
		return 0
	}
	return s.Backend.Need().Count()
}

// closestPeer picks the peer library a lock is compared with: same backend,
// then the nearest number of Redis nodes (a one-node lock is compared with a
// one-node peer, Redlock with five-node Redsync), then a Go peer before a
// guest, then by name. Peers and
// in-process locks have no closest peer.
func closestPeer(s impls.Spec, among []impls.Spec) (impls.Spec, bool) {
	if s.Peer || backendOf(s) == BackendInProcess {
		return impls.Spec{}, false
	}
	var cands []impls.Spec
	for _, p := range among {
		// A guest around a lock of ours is no third-party library: it is
		// compared with the lock it wraps (protocolTwins), not as a peer.
		if p.Peer && backendOf(p) == backendOf(s) && !wrapsOurs(p.Name) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return impls.Spec{}, false
	}
	dist := func(p impls.Spec) int {
		d := redisNodes(p) - redisNodes(s)
		if d < 0 {
			d = -d
		}
		return d
	}
	slices.SortStableFunc(cands, func(a, b impls.Spec) int {
		if da, db := dist(a), dist(b); da != db {
			return da - db
		}
		if a.Guest != b.Guest {
			// A guest pays two pipe crossings per operation: a lock of ours
			// is held to a peer in its own language before a guest.
			if a.Guest {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return cands[0], true
}
