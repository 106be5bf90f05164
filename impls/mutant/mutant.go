//go:build mutants

package mutant

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// The mutants' names: the code under a switch names its mutant with one of
// these constants, so a misspelt switch does not compile.
const (
	SetNXPXReleaseUnchecked      = "setnx-px-release-unchecked"
	SetNXPXNoExpiry              = "setnx-px-no-expiry"
	SetNXPXFenceReused           = "setnx-px-fence-reused"
	SetNXPXGrantWithoutNX        = "setnx-px-grant-without-nx"
	SetNXPXWaitShortfallKept     = "setnx-px-wait-shortfall-kept"
	SetNXPXWaitOtherConnection   = "setnx-px-wait-other-connection"
	SetNXPXWaitAllOneReplica     = "setnx-px-wait-all-one-replica"
	LuaSetNXExpireNoExpiry       = "lua-setnx-expire-no-expiry"
	ReentrantReleaseUnchecked    = "reentrant-release-unchecked"
	ReentrantNoWatchdog          = "reentrant-no-watchdog"
	ReentrantGrantWhenHeld       = "reentrant-grant-when-held"
	ReentrantFencedTokenReused   = "reentrant-fenced-token-reused"
	FairReleaseUnchecked         = "fair-release-unchecked"
	RedlockMinorityGrant         = "redlock-minority-grant"
	RedlockNoValidityCheck       = "redlock-no-validity-check"
	ZooKeeperNotLowest           = "zookeeper-not-lowest"
	EtcdNotHead                  = "etcd-lock-not-head"
	ZooKeeperTokenReused         = "zookeeper-token-reused"
	ZooKeeperGrantOnWake         = "zookeeper-grant-on-wake"
	PGAdvisoryIgnoreTryResult    = "pg-advisory-ignore-try-result"
	PGAdvisoryReleaseKeepsLock   = "pg-advisory-release-keeps-lock"
	PGOptimisticNoCompare        = "pg-optimistic-no-compare"
	PGOptimisticReleaseAny       = "pg-optimistic-release-unchecked"
	PGOptimisticVersionReused    = "pg-optimistic-version-reused"
	PGForUpdateSkipLocked        = "pg-for-update-skip-locked-grants"
	MySQLGetLockIgnoreResult     = "mysql-get-lock-ignore-result"
	MySQLForUpdateSkipLocked     = "mysql-for-update-skip-locked-grants"
	MySQLOptimisticNoCompare     = "mysql-optimistic-no-compare"
	EtcdTokenReused              = "etcd-lock-token-reused"
	MySQLOptimisticVersionReused = "mysql-optimistic-version-reused"
	ReentrantRenewUnchecked      = "reentrant-renew-unchecked"
	ZooKeeperLostNeverReported   = "zookeeper-lost-never-reported"
	SetNXPXWaitCountIgnored      = "setnx-px-wait-count-ignored"
)

// Mutant is one known break of one lock.
type Mutant struct {
	Name string
	// Lock is the implementation the mutant breaks (an impls name).
	Lock string
	// Breaks says what the mutant does to the lock.
	Breaks string
	// Catcher is the cell the lab's design says must catch it
	// ("scenario" or "scenario/fenced"): `bench mutants` runs it first,
	// and the short test asserts it. A mutant whose break no verdict can
	// see (it changes what the lock tells its holder, and no worker acts
	// on that) names a Go test instead, "test PACKAGE TEST" (see Test).
	Catcher string
}

// testCatcher starts a Catcher that names a Go test.
const testCatcher = "test "

// Test returns the package (a directory from the module root, "./impls/x")
// and the top-level test that catch the mutant, when its Catcher names a
// Go test rather than a cell: `go test -tags mutants -run '^TEST$' PACKAGE`
// must fail with the mutant live and pass without it.
func (m Mutant) Test() (pkg, test string, ok bool) {
	rest, ok := strings.CutPrefix(m.Catcher, testCatcher)
	if !ok {
		return "", "", false
	}
	pkg, test, ok = strings.Cut(rest, " ")
	return pkg, test, ok && pkg != "" && test != ""
}

// all is the registry, in one table.
var all = []Mutant{
	{SetNXPXReleaseUnchecked, "redis-setnx-px", "release is a plain DEL: no check that the key still holds our token", "late-release"},
	{SetNXPXNoExpiry, "redis-setnx-px", "the grant is SET NX without PX: the key never expires", "holder-crash"},
	{SetNXPXFenceReused, "redis-setnx-px", "every grant gets fencing token 1 instead of the next INCR", "pause-past-ttl/fenced"},
	{SetNXPXGrantWithoutNX, "redis-setnx-px", "the grant is SET without NX: it overwrites a live holder's key", "contention"},
	{SetNXPXWaitShortfallKept, "redis-setnx-px-wait", "a grant whose WAIT fell short (or failed) is kept and handed out, as if the replica had acknowledged it", "@redis-sentinel/sentinel-kill-at-grant"},
	{SetNXPXWaitOtherConnection, "redis-setnx-px-wait", "the WAIT goes through the client, not on the connection that carried the grant: another pooled connection (or, on a Redis Cluster, a random master), whose WAIT counts no write of the grant and is answered by any attached replica", "@redis-sentinel/sentinel-kill-at-grant"},
	{SetNXPXWaitAllOneReplica, "redis-setnx-px-wait-all", "the WAIT asks for one replica, not every one the master counts (Redisson as it ships accepts one of all it waited for): an acknowledgement from one replica, stale on a master cut off without a word, confirms the grant", "@redis-sentinel/sentinel-split-after-ack"},
	{LuaSetNXExpireNoExpiry, "redis-lua-setnx-expire", "the acquire script runs SETNX without its PEXPIRE: the key never expires", "crash-after-setnx"},
	{ReentrantReleaseUnchecked, "redis-reentrant", "the last release deletes the hash without checking our owner field is in it", "late-release"},
	{ReentrantNoWatchdog, "redis-reentrant", "no watchdog: the lease is never renewed and runs out under a live holder", "slow-work-past-ttl"},
	{ReentrantGrantWhenHeld, "redis-reentrant", "the acquire script grants even when another owner holds the hash", "contention"},
	{ReentrantFencedTokenReused, "redis-reentrant-fenced", "every grant reports fencing token 1 instead of the INCR it drew", "pause-past-ttl/fenced"},
	{FairReleaseUnchecked, "redis-fair", "release hands the lock to the next waiter (or deletes it) without checking we still own it", "late-release"},
	{RedlockMinorityGrant, "redlock", "a grant needs one node, not a majority", "contention"},
	{RedlockNoValidityCheck, "redlock", "the validity time is not computed: a lease claims a day however long the grant took, and the client works past the TTL", "slow-work-past-ttl"},
	{ZooKeeperNotLowest, "zookeeper", "a client takes the lock as soon as its node exists, without checking it is the lowest sequence node", "contention"},
	{EtcdNotHead, "etcd-lock", "a client takes the lock as soon as its key is made, without checking it has the oldest create revision of the line", "contention"},
	{ZooKeeperTokenReused, "zookeeper", "every grant's fencing token is 1 instead of its directory's czxid + its sequence number", "pause-past-ttl/fenced"},
	{PGForUpdateSkipLocked, "pg-for-update", "acquire locks the row with SKIP LOCKED and takes no row back (locked by another transaction) for a grant", "contention"},
	{MySQLGetLockIgnoreResult, "mysql-get-lock", "acquire asks GET_LOCK with a zero timeout and grants whatever it answered, 0 (held by another session) too", "contention"},
	{MySQLForUpdateSkipLocked, "mysql-for-update", "acquire locks the row with SKIP LOCKED and takes no row back (locked by another transaction) for a grant", "contention"},
	{MySQLOptimisticNoCompare, "mysql-optimistic", "the grant's UPDATE has no condition on owner and expiry: it takes the row whoever holds it", "contention"},
	{ZooKeeperGrantOnWake, "zookeeper", "a waiter takes the lock when its predecessor's deletion is reported, without listing the line again on its session", "queued-waiter-crash-in-section"},
	{PGAdvisoryIgnoreTryResult, "pg-advisory", "acquire calls pg_try_advisory_lock and grants whatever it returned", "contention"},
	{PGAdvisoryReleaseKeepsLock, "pg-advisory", "release returns the connection to the pool without pg_advisory_unlock: the session lock survives, and only the releasing client can take it again", "release-hand-off"},
	{PGOptimisticNoCompare, "pg-optimistic", "the acquire's upsert has no WHERE: it takes the row whoever holds it", "contention"},
	{PGOptimisticReleaseAny, "pg-optimistic", "release frees the row without checking owner and version", "late-release"},
	{PGOptimisticVersionReused, "pg-optimistic", "a grant keeps the row's version instead of bumping it, so the token repeats", "pause-past-ttl/fenced"},
	{EtcdTokenReused, "etcd-lock", "every grant's fencing token is 1 instead of its key's create revision", "pause-past-ttl/fenced"},
	{MySQLOptimisticVersionReused, "mysql-optimistic", "a grant keeps the row's version instead of bumping it, so the token repeats", "pause-past-ttl/fenced"},
	// The three below break what a lock tells its holder or how it counts
	// an acknowledgement, which no cell's verdict reads (a worker never
	// acts on Lost, and the fail-over cells cannot make a WAIT answer short
	// without an error; see docs/mutants.md): a Go test that asserts the
	// behaviour catches each.
	{ReentrantRenewUnchecked, "redis-reentrant", "the watchdog's renewal is a plain PEXPIRE with no check that our owner field is still in the hash: it extends whoever holds the lock, and a lock deleted or expired behind the holder's back is reported renewed, so Lost never closes", testCatcher + "./impls/redisson TestLostWhenKeyDeletedBehindHoldersBack"},
	{ZooKeeperLostNeverReported, "zookeeper", "a dropped connection or an expired session never closes the holder's Lost", testCatcher + "./impls/zklock TestLostClosesWhenTheSessionMayBeGone"},
	{SetNXPXWaitCountIgnored, "redis-setnx-px-wait", "a WAIT that answers is taken for a confirmation however few replicas it counts (0 too); a WAIT that fails still gives the grant back", testCatcher + "./impls/redislock TestSetNXPXWaitGivesBackAGrantNoReplicaAcknowledged"},
}

// Cell is the full name of the mutant's designed catcher (none for a
// catcher that is a Go test: see Test): a single-topology
// cell is "lock/scenario[/fenced]", a cell off it "lock@topology/scenario",
// and Catcher is that name without the lock (and its slash).
func (m Mutant) Cell() string {
	if strings.HasPrefix(m.Catcher, "@") {
		return m.Lock + m.Catcher
	}
	return m.Lock + "/" + m.Catcher
}

// Label is a cell's name without its lock, as Catcher names it.
func Label(cell, lock string) string {
	return strings.TrimPrefix(strings.TrimPrefix(cell, lock), "/")
}

// All returns every mutant, in the registry's order.
func All() []Mutant { return append([]Mutant(nil), all...) }

// Names returns every mutant's name.
func Names() []string {
	var out []string
	for _, m := range all {
		out = append(out, m.Name)
	}
	return out
}

// Lookup finds a mutant by name; the error lists the valid names.
func Lookup(name string) (Mutant, error) {
	for _, m := range all {
		if m.Name == name {
			return m, nil
		}
	}
	return Mutant{}, fmt.Errorf("unknown mutant %q; valid names: %s", name, strings.Join(Names(), ", "))
}

// live is the live mutant's name ("" for none).
var live atomic.Value

func init() { live.Store(os.Getenv(EnvVar)) }

// On reports whether the named mutant is live.
func On(name string) bool { return live.Load().(string) == name }

// Live returns the live mutant's name, "" for none.
func Live() string { return live.Load().(string) }

// Activate makes the named mutant live in this process and in every process
// it starts from now on, and returns the function that restores the state
// before. Only `bench mutants` and tests call it; it is not safe to call
// while a scenario runs.
func Activate(name string) (restore func(), err error) {
	if _, err := Lookup(name); err != nil {
		return nil, err
	}
	prevLive := Live()
	prevEnv, hadEnv := os.LookupEnv(EnvVar)
	if err := os.Setenv(EnvVar, name); err != nil {
		return nil, fmt.Errorf("set %s: %w", EnvVar, err)
	}
	live.Store(name)
	return func() {
		live.Store(prevLive)
		if hadEnv {
			os.Setenv(EnvVar, prevEnv)
		} else {
			os.Unsetenv(EnvVar)
		}
	}, nil
}
