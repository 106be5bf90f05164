package nemesis

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
)

// ServerEndsSession: the lock server ends a client's sessions while the
// client lives (an operator's pg_terminate_backend or KILL, as an
// idle-session timeout or a pooler would), and the client carries on.
const ServerEndsSession = "server-ends-session"

// HolderSessionEnded is the fixed schedule (and matrix scenario) that ends
// the holder's sessions while it is inside its critical section.
const HolderSessionEnded = "holder-session-ended"

func init() {
	register(serverEndsSession{})
	// The holder stays in its section for a fifth of a TTL after its
	// sessions end: long enough for a waiter the server lets in to read
	// and write (milliseconds), and short enough that a lease the fault
	// does not touch (a row with an expiry) is still live when the holder
	// writes, so only the session's end is judged. The holder also sits at
	// its failpoint from its stop until the strike, which took 600ms of a
	// 1s lease in one run: with half a TTL on top, mysql-optimistic's row
	// expired and was taken over, the lease's end and not the session's.
	Fixed[HolderSessionEnded] = func(impl string, fencing bool, ttl, bound time.Duration) Schedule {
		s := fixed(impl, fencing, ttl, Step{Kind: ServerEndsSession, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(ttl / 5)})
		s.Name = HolderSessionEnded
		return s
	}
}

// SessionsEnd says why the server of spec's lock cannot end a client's
// session (nil when it can): its kind must keep sessions it can end. The
// fault finds a client's sessions by the client's own address and port,
// which the server sees in container mode too (cluster publishes such a
// kind's container where the kernel, not the engine's proxy, forwards).
func SessionsEnd(spec impls.Spec) error {
	k, err := cluster.KindOf(spec.Backend.Kind)
	if err != nil {
		return fmt.Errorf("it ends a client's sessions on the lock's server, and %s has none: %w", spec.Name, err)
	}
	if _, ok := k.(cluster.SessionEnder); !ok {
		return fmt.Errorf("it ends a client's sessions on the lock's server, and the lab cannot end a %s session", spec.Backend.Kind.Title())
	}
	return nil
}

type serverEndsSession struct{}

func (serverEndsSession) Name() string { return ServerEndsSession }

func (serverEndsSession) Applies(spec impls.Spec, topo Topology) error {
	if err := clientApplies(spec, topo); err != nil {
		return err
	}
	return SessionsEnd(spec)
}

func (serverEndsSession) Targets(topo Topology) []string { return clientTargets(topo) }

// Inject finds the client's connections to each lock server from its own
// open sockets and has the server end those sessions.
func (serverEndsSession) Inject(ctx context.Context, sys System, target string) (string, error) {
	slot, err := ClientSlot(target)
	if err != nil {
		return "", err
	}
	p, err := sys.Client(slot)
	if err != nil {
		return "", err
	}
	withPID, ok := p.(interface{ PID() int })
	if !ok {
		return "", fmt.Errorf("%s's process has no pid to find its connections by", target)
	}
	note := ""
	for _, name := range sys.LockServers() {
		n, err := sys.Server(name)
		if err != nil {
			return "", err
		}
		k, err := cluster.KindOf(n.Kind)
		if err != nil {
			return "", err
		}
		ender, ok := k.(cluster.SessionEnder)
		if !ok {
			return "", fmt.Errorf("the lab cannot end a %s session", n.Kind.Title())
		}
		conns, err := cluster.ClientConnections(withPID.PID(), n.Addr)
		if err != nil {
			return "", err
		}
		ended, err := ender.EndSessions(ctx, n, conns)
		if err != nil {
			return "", err
		}
		if note != "" {
			note += ", "
		}
		note += fmt.Sprintf("%s ended %d of %d sessions", name, ended, len(conns))
	}
	return note, nil
}

// Heal has nothing to undo: the sessions are gone, and the client opens
// new ones when it next needs them.
func (serverEndsSession) Heal(context.Context, System, string) (string, error) { return "", nil }
