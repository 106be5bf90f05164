package guest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
)

// Options tune the lab's side of the protocol; the zero value is the
// documented one. Tests shorten Grace to see a silent guest sooner.
type Options struct {
	Grace time.Duration // past a request's timeout; 0: defaultGrace
	// spare: the client may be a process Prestart started in advance (the
	// registry's clients; the protocol's own tests start each of theirs).
	spare bool
}

// Locker is one guest process: one lock client of the guest's library.
type Locker struct {
	m    Manifest
	name string
	c    *conn
	// Name and Version are what the guest's hello said of its library.
	Name, Version string

	mu     sync.Mutex
	leases map[string]*lease
}

// Start runs the guest and says hello; on any failure the guest is
// stopped before Start returns.
func Start(m Manifest, cfg impls.Config, o Options) (*Locker, error) {
	name := m.ImplName()
	hc, err := helloFor(m, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if o.Grace <= 0 {
		o.Grace = defaultGrace
	}
	l := &Locker{m: m, name: name, leases: map[string]*lease{}}
	c, err := spawn(m, o.Grace, o.spare)
	if err != nil {
		return nil, impls.Fail(name, "start", impls.ErrBackend, err)
	}
	c.onLost = l.lost
	l.c = c
	go l.loseAllOnBreach()
	if err := l.hello(hc); err != nil {
		_ = c.close()
		if d := c.deadErr(); d != nil && d != errClosed {
			err = d // the breach the hello found, with the stderr of the guest
		}
		return nil, impls.Fail(name, "hello", impls.ErrBackend, err)
	}
	return l, nil
}

func helloFor(m Manifest, cfg impls.Config) (*helloConfig, error) {
	hc := &helloConfig{Servers: map[string][]string{}, TTLMS: cfg.TTL.Milliseconds(), ClientID: cfg.ClientID}
	for kind, ep := range cfg.Servers {
		if ep.Via != "" {
			if kind == m.Kind {
				return nil, fmt.Errorf("protocol %d gives a guest plain server addresses, but this topology's %s servers are reached through %s",
					ProtocolVersion, kind, ep.Via)
			}
			continue
		}
		hc.Servers[string(kind)] = ep.Addrs
	}
	if len(hc.Servers[string(m.Kind)]) == 0 {
		return nil, fmt.Errorf("no %s servers configured", m.Kind)
	}
	return hc, nil
}

func (l *Locker) hello(hc *helloConfig) error {
	id, cl, err := l.c.send(request{Op: "hello", Protocol: ProtocolVersion, Config: hc},
		time.Now().Add(l.m.startTimeout()), BreachSilentAtStart)
	if err != nil {
		return err
	}
	_ = id
	var a line
	if err := l.c.await(context.Background(), cl, &a); err != nil {
		return err
	}
	l.c.mu.Lock()
	l.c.helloDone = true
	l.c.mu.Unlock()
	if !*a.OK {
		return fmt.Errorf("the guest could not start its client: %s", msg(a))
	}
	if a.Protocol != ProtocolVersion {
		l.c.breach(BreachVersion, fmt.Sprintf("the guest speaks protocol %d, the lab speaks %d", a.Protocol, ProtocolVersion))
		return l.c.deadErr()
	}
	var caps Capabilities
	if a.Capabilities != nil {
		caps = *a.Capabilities
	}
	if caps != l.m.Capabilities {
		l.c.breach(BreachCapabilities, fmt.Sprintf("hello says capabilities %s, the manifest says %s",
			caps.Impls(), l.m.Capabilities.Impls()))
		return l.c.deadErr()
	}
	l.Name, l.Version = a.Name, a.Version
	return nil
}

// loseAllOnBreach closes every lease's Lost when the guest broke the
// protocol or crashed: its library is gone, so no lease can be trusted.
func (l *Locker) loseAllOnBreach() {
	<-l.c.deadCh
	var pe *ProtocolError
	if !errors.As(l.c.deadErr(), &pe) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ls := range l.leases {
		ls.markLost()
	}
}

// lost closes the Lost channel of the lease a lost event names.
func (l *Locker) lost(id, _ string) {
	l.mu.Lock()
	ls := l.leases[id]
	l.mu.Unlock()
	if ls != nil {
		ls.markLost()
	}
}

// timeoutOf is the timeout_ms of a request under ctx: what is left of its
// deadline, or none (0) for an acquire and defaultOpTimeout otherwise.
func timeoutOf(ctx context.Context, op string) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left > time.Millisecond {
			return left
		}
		return time.Millisecond
	}
	if op == "acquire" {
		return 0
	}
	return defaultOpTimeout
}

// Acquire blocks until the guest grants key or ctx ends.
func (l *Locker) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.grant(ctx, "acquire", key)
}

// TryAcquire makes one attempt.
func (l *Locker) TryAcquire(ctx context.Context, key string) (impls.Lease, error) {
	return l.grant(ctx, "try-acquire", key)
}

func (l *Locker) grant(ctx context.Context, op, key string) (impls.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, impls.Fail(l.name, op, err, nil)
	}
	r := request{Op: op, Key: key}
	ms := timeoutOf(ctx, op).Milliseconds()
	r.TimeoutMS = &ms
	var deadline time.Time
	if ms > 0 {
		deadline = time.Now().Add(time.Duration(ms)*time.Millisecond + l.c.grace)
	}
	id, cl, err := l.c.send(r, deadline, BreachSilence)
	if err != nil {
		return nil, l.fail(ctx, op, err)
	}
	var a line
	if err := l.c.await(ctx, cl, &a); err != nil {
		if ctx.Err() != nil || errors.Is(err, errClosed) {
			// A grant that comes anyway is given back, so a wait its
			// caller left (or a closed client's) never holds the lock.
			l.abandonGrant(id, key)
		}
		return nil, l.fail(ctx, op, err)
	}
	if !*a.OK {
		return nil, l.answerErr(ctx, op, a)
	}
	if a.Lease == "" {
		l.c.breach(BreachBadJSON, fmt.Sprintf(`the grant of %s (id %d) has no "lease"`, op, id))
		return nil, l.fail(ctx, op, l.c.deadErr())
	}
	return l.newLease(key, a), nil
}

// abandonGrant tells the guest its caller gave up, and releases a grant
// that comes anyway, so an abandoned wait never leaves the lock held.
func (l *Locker) abandonGrant(id int64, key string) {
	l.c.abandon(id, func(a line) {
		if a.OK != nil && *a.OK && a.Lease != "" {
			ls := l.newLease(key, a)
			ctx, cancel := context.WithTimeout(context.Background(), defaultOpTimeout)
			defer cancel()
			_ = ls.Release(ctx)
		}
	})
	cid, _, err := l.c.send(request{Op: "cancel", Target: id}, time.Now().Add(l.c.grace), BreachSilence)
	if err == nil {
		l.c.abandon(cid, nil)
	}
}

func (l *Locker) newLease(key string, a line) impls.Lease {
	ls := &lease{l: l, id: a.Lease, key: key, token: a.Token, lostCh: make(chan struct{})}
	l.mu.Lock()
	l.leases[a.Lease] = ls
	l.mu.Unlock()
	if l.m.Capabilities.Validity && a.ValidUntilMS != nil {
		v := &validLease{lease: ls}
		v.set(*a.ValidUntilMS)
		ls.valid = v
		return v
	}
	return ls
}

// fail wraps a failure of the exchange itself (not a guest's answer).
func (l *Locker) fail(ctx context.Context, op string, err error) error {
	if ctxErr := impls.ContextErr(ctx); ctxErr != nil && errors.Is(err, ctxErr) {
		if op == "try-acquire" || op == "refresh" || op == "release" {
			// The request went out: it may have taken effect.
			return impls.Fail(l.name, op, impls.ErrUnknown, err)
		}
		return impls.Fail(l.name, op, ctxErr, err)
	}
	if errors.Is(err, errClosed) {
		return impls.Fail(l.name, op, impls.ErrBackend, err)
	}
	// A broken or crashed guest: a write may have reached the server.
	return impls.Fail(l.name, op, impls.ErrUnknown, err)
}

// answerErr maps a guest's error answer to impls' kinds.
func (l *Locker) answerErr(ctx context.Context, op string, a line) error {
	cause := errors.New(msg(a))
	kind := ""
	if a.Error != nil {
		kind = a.Error.Kind
	}
	switch kind {
	case kindHeld:
		return impls.Fail(l.name, op, impls.ErrHeld, cause)
	case kindLost:
		return impls.Fail(l.name, op, impls.ErrNotHeld, cause)
	case kindBackend:
		return impls.Fail(l.name, op, impls.ErrBackend, cause)
	case kindTimeout:
		if err := impls.ContextErr(ctx); err != nil {
			return impls.Fail(l.name, op, err, cause)
		}
		return impls.Fail(l.name, op, context.DeadlineExceeded, cause)
	default: // "unknown", or a kind this lab does not know: assume the worst
		if ctxErr := impls.ContextErr(ctx); ctxErr != nil {
			// The guest's request was on the wire when the caller's
			// context ended (its timeout is the caller's deadline): as a
			// native lock says it (impls.Classify), the outcome is unknown
			// and the context ended, both.
			cause = fmt.Errorf("%w: %w", ctxErr, cause)
		}
		return impls.Fail(l.name, op, impls.ErrUnknown, cause)
	}
}

// Close closes the guest's client without releasing its leases and stops
// the guest process.
func (l *Locker) Close() error { return l.c.close() }

// PID is the guest process's id (for tests that check it is gone).
func (l *Locker) PID() int { return l.c.cmd.Process.Pid }

// lease is one grant, named by the guest's lease id.
type lease struct {
	l        *Locker
	id       string
	key      string
	token    *uint64
	lostOnce sync.Once
	lostCh   chan struct{}
	valid    *validLease // with the validity capability
}

func (s *lease) Key() string { return s.key }

func (s *lease) Token() (uint64, bool) {
	if s.token == nil {
		return 0, false
	}
	return *s.token, true
}

func (s *lease) Lost() <-chan struct{} { return s.lostCh }

func (s *lease) markLost() { s.lostOnce.Do(func() { close(s.lostCh) }) }

func (s *lease) Refresh(ctx context.Context) error { return s.do(ctx, "refresh") }

func (s *lease) Release(ctx context.Context) error {
	err := s.do(ctx, "release")
	if err == nil || errors.Is(err, impls.ErrNotHeld) {
		s.l.mu.Lock()
		delete(s.l.leases, s.id)
		s.l.mu.Unlock()
	}
	return err
}

func (s *lease) do(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return impls.Fail(s.l.name, op, err, nil)
	}
	id, a, err := s.l.c.roundTrip(ctx, request{Op: op, Lease: s.id}, timeoutOf(ctx, op))
	if err != nil {
		if ctx.Err() != nil && id != 0 {
			s.l.c.abandon(id, nil)
		}
		return s.l.fail(ctx, op, err)
	}
	if !*a.OK {
		return s.l.answerErr(ctx, op, a)
	}
	if s.valid != nil && a.ValidUntilMS != nil {
		s.valid.set(*a.ValidUntilMS)
	}
	return nil
}

// validLease is a lease whose grant said how long it is surely valid.
type validLease struct {
	*lease
	mu    sync.Mutex
	until time.Time
}

func (v *validLease) set(unixMS int64) {
	v.mu.Lock()
	v.until = time.UnixMilli(unixMS)
	v.mu.Unlock()
}

func (v *validLease) ValidUntil() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.until
}
