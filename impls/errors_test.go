package impls

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// lateTimer is a context whose deadline has passed but whose timer has not
// fired yet: the window in which a socket deadline taken from the context
// can already have expired while ctx.Err() is still nil.
type lateTimer struct{ context.Context }

func (lateTimer) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

func TestClassify(t *testing.T) {
	timeout := &os.SyscallError{Syscall: "write", Err: os.ErrDeadlineExceeded}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		err      error
		mutating bool
		want     []error // every one must match errors.Is
		not      []error
	}{
		{"refused write fails surely", context.Background(), syscall.ECONNREFUSED, true, []error{ErrBackend}, []error{ErrUnknown}},
		{"timed-out write is unknown", context.Background(), timeout, true, []error{ErrUnknown}, []error{ErrBackend}},
		{"timed-out read fails", context.Background(), timeout, false, []error{ErrBackend}, []error{ErrUnknown}},
		{"cancelled read is the context's", cancelled, timeout, false, []error{context.Canceled}, []error{ErrUnknown}},
		{"cancelled write is unknown and the context's", cancelled, timeout, true, []error{ErrUnknown, context.Canceled}, nil},
		{"deadline passed before its timer fired", lateTimer{context.Background()}, timeout, true, []error{ErrUnknown, context.DeadlineExceeded}, nil},
		{"deadline passed, read", lateTimer{context.Background()}, timeout, false, []error{context.DeadlineExceeded}, []error{ErrUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.ctx, "impl", "acquire", tt.err, tt.mutating)
			for _, w := range tt.want {
				if !errors.Is(got, w) {
					t.Errorf("Classify = %v, want it to be %v", got, w)
				}
			}
			for _, n := range tt.not {
				if errors.Is(got, n) {
					t.Errorf("Classify = %v, must not be %v", got, n)
				}
			}
		})
	}
}
