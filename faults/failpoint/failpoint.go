// Package failpoint names the points inside lock implementations and inside
// the critical section where a scenario can crash (SIGKILL) or freeze
// (SIGSTOP) a client. An implementation calls impls.Config.Hit(name); the
// worker process decides what happens there.
package failpoint

const (
	// AfterSetNX: redis-setnx-expire has set the key but not yet its expiry.
	AfterSetNX = "after-setnx"
	// BeforeWait: a lock that confirms its grant with the replicas
	// (redis-setnx-px-wait) has written its grant, expiry included, on the
	// master and not yet asked for the replicas' acknowledgement. Not
	// AfterSetNX: a fault meant to land on a written grant must not land on
	// redis-setnx-expire's key without its expiry.
	BeforeWait = "before-wait"
	// BetweenGetAndDel: redis-get-del-release has checked the owner with GET
	// but not yet sent DEL.
	BetweenGetAndDel = "between-get-and-del"
	// AfterAcquire: the client has just been granted the lock.
	AfterAcquire = "after-acquire"
	// InWork: the client holds the lock, has read the resource and is
	// working, before the checks that come before its write. A client held
	// here is slow, not paused: whatever it checks next (a lease's validity
	// time) sees the time it took.
	InWork = "in-work"
	// InCriticalSection: the client holds the lock, has read the resource
	// and done its work, and checked its lease's validity where it has one;
	// the write comes next. A pause here is the one no check can guard against.
	InCriticalSection = "in-critical-section"
	// BeforeRelease: the client has written the resource and not yet released.
	BeforeRelease = "before-release"
)
