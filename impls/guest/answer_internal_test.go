package guest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/impls"
)

// A guest's "unknown" answer that arrives after the caller's context ended
// says both, as a native lock's does (impls.Classify): the outcome is
// unknown, and the caller's deadline passed. The conformance suite's
// blocked-acquire check asks for the deadline; CI once saw the guest's
// poll cut mid-request and the deadline lost in translation.
func TestUnknownAnswerAfterTheContextEndedSaysBoth(t *testing.T) {
	ended, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ended.Done()
	tests := []struct {
		name         string
		ctx          context.Context
		kind         string
		wantDeadline bool
		want         error
	}{
		{"unknown, context live", context.Background(), kindUnknown, false, impls.ErrUnknown},
		{"unknown, context ended", ended, kindUnknown, true, impls.ErrUnknown},
		{"held, context ended", ended, kindHeld, false, impls.ErrHeld},
		{"timeout, context ended", ended, kindTimeout, true, context.DeadlineExceeded},
	}
	l := &Locker{name: "guest:test"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok := false
			err := l.answerErr(tt.ctx, "acquire", line{OK: &ok, Error: &answerError{Kind: tt.kind, Message: "m"}})
			if !errors.Is(err, tt.want) {
				t.Errorf("answerErr = %v, want %v", err, tt.want)
			}
			if got := errors.Is(err, context.DeadlineExceeded); got != tt.wantDeadline {
				t.Errorf("answerErr = %v: is DeadlineExceeded %v, want %v", err, got, tt.wantDeadline)
			}
		})
	}
}
