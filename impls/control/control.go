// Package control holds the two lockers that calibrate the checker: `none`,
// which does not lock at all and must be caught, and `local-mutex`, an
// in-process mutex that is trivially correct and must pass.
package control

import (
	"context"
	"sync"

	"github.com/locklab/locklab/impls"
)

func init() {
	impls.Register(impls.Spec{
		Name:    "none",
		Summary: "no locking at all: every acquire succeeds at once (control, must be caught)",
		Broken:  "does not lock",
		Page:    "docs/lessons/01-no-lock.md",
		Source:  "impls/control/control.go",
		New:     func(impls.Config) (impls.Locker, error) { return noLock{}, nil },
	})
	impls.Register(impls.Spec{
		Name:    "local-mutex",
		Summary: "one sync.Mutex per key shared by every client of this process (control, must pass)",
		Caps:    impls.Capabilities{NoPolling: true},
		Backend: impls.Backend{InProcess: true},
		Page:    "docs/lessons/01-no-lock.md",
		Source:  "impls/control/control.go",
		New:     func(impls.Config) (impls.Locker, error) { return localMutex{}, nil },
	})
}

type noLock struct{}

func (noLock) Acquire(_ context.Context, key string) (impls.Lease, error) { return noLease(key), nil }
func (noLock) TryAcquire(_ context.Context, key string) (impls.Lease, error) {
	return noLease(key), nil
}
func (noLock) Close() error { return nil }

type noLease string

func (l noLease) Key() string                 { return string(l) }
func (noLease) Token() (uint64, bool)         { return 0, false }
func (noLease) Refresh(context.Context) error { return nil }
func (noLease) Release(context.Context) error { return nil }
func (noLease) Lost() <-chan struct{}         { return nil }

// mutexes is shared by every local-mutex client of the process: that is what
// makes them exclude each other. A buffered channel of one slot is a mutex
// whose wait can be abandoned when a context ends.
var (
	mutexesMu sync.Mutex
	mutexes   = map[string]chan struct{}{}
)

func slot(key string) chan struct{} {
	mutexesMu.Lock()
	defer mutexesMu.Unlock()
	ch, ok := mutexes[key]
	if !ok {
		ch = make(chan struct{}, 1)
		mutexes[key] = ch
	}
	return ch
}

type localMutex struct{}

func (localMutex) Acquire(ctx context.Context, key string) (impls.Lease, error) {
	select {
	case slot(key) <- struct{}{}:
		return &mutexLease{key: key}, nil
	case <-ctx.Done():
		return nil, impls.Fail("local-mutex", "acquire", ctx.Err(), nil)
	}
}

func (localMutex) TryAcquire(_ context.Context, key string) (impls.Lease, error) {
	select {
	case slot(key) <- struct{}{}:
		return &mutexLease{key: key}, nil
	default:
		return nil, impls.Fail("local-mutex", "try-acquire", impls.ErrHeld, nil)
	}
}

func (localMutex) Close() error { return nil }

type mutexLease struct {
	key      string
	mu       sync.Mutex
	released bool
}

func (l *mutexLease) Key() string           { return l.key }
func (l *mutexLease) Token() (uint64, bool) { return 0, false }
func (l *mutexLease) Lost() <-chan struct{} { return nil }

func (l *mutexLease) Refresh(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return impls.Fail("local-mutex", "refresh", impls.ErrNotHeld, nil)
	}
	return nil
}

func (l *mutexLease) Release(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return impls.Fail("local-mutex", "release", impls.ErrNotHeld, nil)
	}
	l.released = true
	<-slot(l.key)
	return nil
}
