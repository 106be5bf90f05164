// Package failpoint names the points inside lock implementations and inside
// the critical section where a scenario can crash (SIGKILL) or freeze
// (SIGSTOP) a client. An implementation calls impls.Config.Hit(name); the
// worker process decides what happens there.
package failpoint

const (
	// AfterSetNX: redis-setnx-expire has set the key but not yet its expiry.
	AfterSetNX = "after-setnx"
	// BetweenGetAndDel: redis-get-del-release has checked the owner with GET
	// but not yet sent DEL.
	BetweenGetAndDel = "between-get-and-del"
	// InCriticalSection: the client holds the lock and has read the resource
	// but not yet written it.
	InCriticalSection = "in-critical-section"
	// BeforeRelease: the client has written the resource and not yet released.
	BeforeRelease = "before-release"
)

// All lists every failpoint name.
var All = []string{AfterSetNX, BetweenGetAndDel, InCriticalSection, BeforeRelease}
