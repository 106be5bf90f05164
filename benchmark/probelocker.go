package benchmark

import (
	"context"

	"github.com/locklab/locklab/impls"
)

// The round-trip limit's probe dressed as a lock, so that it can take its
// turn among the locks of its backend in the uncontended interleaving: a
// lock's bound is then measured in the slices between the lock's own, and
// each trial's fraction of it compares two rates of one moment of the
// machine. Measured apart, a second or more before, the limit moved by
// ±20–30% from trial to trial on the lab's 2-core machine, more than most
// locks differ from it; and dividing a lock's median trial by the limit's
// fastest, as the bound did before, made a lock at 80% of it read 45%.

// probeLocker grants at once after one cheapest request of its backend
// (cluster.ServerKind.OpenCheapest) and releases with none, so that a
// window of it counts that request's round trips as a lock's window counts
// pairs: through the same loop, clock readings and all.
type probeLocker struct {
	op    func(context.Context) error
	close func()
}

func (p *probeLocker) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	if err := p.op(ctx); err != nil {
		return nil, err
	}
	return probeLease(key), nil
}

func (p *probeLocker) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return p.Acquire(ctx, key)
}

func (p *probeLocker) Close() error {
	p.close()
	return nil
}

// probeLease holds nothing: its release sends no request.
type probeLease string

func (l probeLease) Key() string                     { return string(l) }
func (probeLease) Token() (uint64, bool)             { return 0, false }
func (probeLease) Refresh(ctx context.Context) error { return nil }
func (probeLease) Release(ctx context.Context) error { return nil }
func (probeLease) Lost() <-chan struct{}             { return nil }

// probeName is the probe's name in the held sessions: no lock is named so.
func probeName(backend string) string { return "limit probe: " + backend }

// probeSession returns the run's probe of backend's round trip, one
// client, opening it the first time; ok is false for a backend with no
// limit (the in-process mutex).
func (b *bench) probeSession(ctx context.Context, backend string) (s *session, ok bool, err error) {
	if backend == inProcess {
		return nil, false, nil
	}
	k := heldKey{probeName(backend), Uncontended}
	if h := b.held[k]; h != nil {
		return h, true, nil
	}
	rt, err := b.newRoundTripper(ctx, backend)
	if err != nil {
		return nil, false, err
	}
	key := b.key()
	l := load{
		spec:     impls.Spec{Name: probeName(backend)},
		clients:  1,
		keys:     func(int) string { return key },
		duration: b.opts.Duration,
	}
	h := &session{b: b, l: l, clients: []*lockClient{{locker: &probeLocker{op: rt.op, close: rt.close}, owned: true}}}
	b.held[k] = h
	return h, true, nil
}
