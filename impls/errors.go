package impls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// The four kinds of failure callers tell apart, plus the ambiguous outcome.
// Every error an implementation returns wraps exactly one of these (or a
// context error) and its cause, so errors.Is works on both.
var (
	// ErrHeld: another client holds the lock.
	ErrHeld = errors.New("lock held by another client")
	// ErrNotHeld: the lease is no longer ours (expired, lost, or released).
	// An acquire that stood in line and lost its place there (its own
	// session or lease ended while it waited) fails with it too, not with
	// ErrBackend: it met the lock, and the checker counts it as a client
	// that came for it (a waiter in line through a fault's whole danger
	// window, whose session the fault ended, was not counted, and
	// peer-etcd-mutex@etcd-cluster/leader-isolated under production was
	// called not exercised).
	ErrNotHeld = errors.New("lock not held: lease expired, lost or released")
	// ErrBackend: the lock server failed or could not be reached, and the
	// request surely had no effect.
	ErrBackend = errors.New("lock backend failure")
	// ErrUnknown: the request may or may not have taken effect (timeout or
	// connection cut after it was sent). An acquire with this outcome may
	// have been granted; callers must not assume either way.
	ErrUnknown = errors.New("outcome unknown")
)

// Error carries the operation and implementation with one of the kinds above.
type Error struct {
	Impl string
	Op   string
	Kind error // ErrHeld, ErrNotHeld, ErrBackend, ErrUnknown, context.Canceled or context.DeadlineExceeded
	Err  error // the cause, may be nil
}

func (e *Error) Error() string {
	if e.Err == nil || e.Err == e.Kind {
		return fmt.Sprintf("%s: %s: %v", e.Impl, e.Op, e.Kind)
	}
	return fmt.Sprintf("%s: %s: %v: %v", e.Impl, e.Op, e.Kind, e.Err)
}

// Unwrap exposes both the kind and the cause to errors.Is/As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Fail builds an *Error of a given kind.
func Fail(impl, op string, kind, cause error) error {
	return &Error{Impl: impl, Op: op, Kind: kind, Err: cause}
}

// Classify turns a client library error into an *Error. sent says whether
// the request may already have reached the server and changed state (a
// write); for such requests a timeout or cut connection is ErrUnknown, not a
// failure. A context that ended gives its own error as the kind.
func Classify(ctx context.Context, impl, op string, err error, mutating bool) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if ctxErr := ContextErr(ctx); ctxErr != nil {
		if mutating && !refused(err) {
			// The request may have been on the wire when the context ended.
			return &Error{Impl: impl, Op: op, Kind: ErrUnknown, Err: fmt.Errorf("%w: %w", ctxErr, err)}
		}
		return &Error{Impl: impl, Op: op, Kind: ctxErr, Err: err}
	}
	if mutating && !refused(err) && transient(err) {
		return &Error{Impl: impl, Op: op, Kind: ErrUnknown, Err: err}
	}
	return &Error{Impl: impl, Op: op, Kind: ErrBackend, Err: err}
}

// ContextErr is ctx.Err(), except that a deadline already passed counts as
// exceeded even before the context's own timer has fired. A client library
// that sets its socket deadline from the context (go-redis with
// ContextTimeoutEnabled) can time out a read or write a moment before
// ctx.Err() turns non-nil; without this, that race reports a plain network
// timeout where the caller's deadline was the cause.
func ContextErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// refused reports errors that prove the request never reached a server.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// transient reports network errors after which the request's fate is unknown.
func transient(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
