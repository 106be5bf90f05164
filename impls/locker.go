// Package impls defines the one Locker interface every lock in the lab
// implements, the errors they return, and the registry that names them.
// Each implementation lives in its own sub-package; peers' adapters live in
// impls/peers, apart from ours.
package impls

import (
	"context"
	"time"

	"github.com/locklab/locklab/topology"
)

// Locker grants leases on named keys. One Locker is one client: it owns its
// connections (and, for ZooKeeper, its session), so a scenario gives every
// client its own.
type Locker interface {
	// Acquire blocks until the lock is held or ctx ends.
	Acquire(ctx context.Context, key string) (Lease, error)
	// TryAcquire makes one attempt and returns ErrHeld at once if another
	// client holds the lock.
	TryAcquire(ctx context.Context, key string) (Lease, error)
	// Close releases the client's connections. Leases still held are not
	// released first: closing is what a crash looks like to the server,
	// except that sessions and connections end cleanly.
	Close() error
}

// Lease is one grant of a lock.
type Lease interface {
	Key() string
	// Token is the fencing token of this grant, where the backend can issue
	// one: greater than the token of every earlier grant of the same key.
	Token() (uint64, bool)
	// Refresh extends the lease by its TTL. It fails with ErrNotHeld if the
	// lease already expired or passed to someone else: it never revives it.
	Refresh(ctx context.Context) error
	// Release gives the lock up. ErrNotHeld if it was no longer ours.
	Release(ctx context.Context) error
	// Lost is closed when the implementation learns the lock is no longer
	// held (session expiry, failed renewal). Implementations that cannot
	// learn it return a channel that is never closed.
	Lost() <-chan struct{}
}

// Deadliner is implemented by leases that know until when they are valid
// (Redlock's validity time). A careful client does no work past it.
type Deadliner interface {
	ValidUntil() time.Time
}

// Capabilities says what an implementation offers; `bench list` shows them.
type Capabilities struct {
	Fencing    bool // issues fencing tokens
	Reentrant  bool // the holder may acquire again without blocking
	Renewal    bool // renews its lease by itself while the holder lives
	LostNotify bool // Lost() is closed when the lock is lost
	NoPolling  bool // waiters are woken by a notification, not by polling
	Expiry     bool // a crashed holder's lock frees itself after a time
	// Queued: waiters are served in turn on the server (a line of nodes or
	// keys, a lock manager's wait queue, a wake list served oldest first),
	// so one that dies or freezes in line can hold up those behind it
	// until the server forgets it. The queue scenarios strike such a
	// waiter; a lock whose waiters race for a free lock has no line to
	// block.
	Queued bool
	// Validity: leases know until when they are valid (impls.Deadliner), and
	// a careful client checks it before writing.
	Validity bool
}

// Config is what a factory needs to build one client.
type Config struct {
	// Servers are the lock servers' endpoints by kind: independent Redis
	// nodes, a ZooKeeper ensemble's members, a PostgreSQL DSN. A factory
	// reads its own kind's.
	Servers topology.Endpoints
	// TTL is the lease time (or ZooKeeper session timeout).
	TTL time.Duration
	// ClientID names the client in histories and lock values.
	ClientID string
	// Clock is the client's wall clock; scenarios skew it. Nil means time.Now.
	Clock func() time.Time
	// Failpoint is called at each named failpoint inside an implementation;
	// nil means no failpoints are armed.
	Failpoint func(name string)
}

// Now returns the client's clock reading.
func (c Config) Now() time.Time {
	if c.Clock != nil {
		return c.Clock()
	}
	return time.Now()
}

// Hit calls the failpoint hook, if any.
func (c Config) Hit(name string) {
	if c.Failpoint != nil {
		c.Failpoint(name)
	}
}

// Addrs returns the addresses of the lock servers of kind.
func (c Config) Addrs(kind topology.Kind) []string { return c.Servers.Addrs(kind) }
