package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/nemesis"
)

// TestHandlerOf: each step's trigger gets the handler of its type, which
// knows the client the trigger stops at a failpoint (the one the workers
// arm, and the warm-up waits for) without asking the nemesis again.
func TestHandlerOf(t *testing.T) {
	sec := nemesis.Duration(time.Second)
	for _, tc := range []struct {
		name      string
		step      nemesis.Step
		want      triggerHandler
		slot      int
		failpoint string
		err       string
	}{
		{"at a time", nemesis.Step{At: sec, Kind: nemesis.ServerPause, Target: "redis-1"},
			atTime{nemesis.AtTime{At: time.Second}}, -1, "", ""},
		{"on the holder", nemesis.Step{At: sec, Kind: nemesis.ClientPause, Target: nemesis.HolderTarget},
			onHolder{nemesis.OnHolder{At: time.Second}}, -1, "", ""},
		{"at a failpoint", nemesis.Step{Kind: nemesis.ClientPause, Target: "client-1", After: "after-acquire"},
			atFailpoint{nemesis.AtFailpoint{Failpoint: "after-acquire", Client: 1}}, 1, "after-acquire", ""},
		{"held at a failpoint", nemesis.Step{Kind: nemesis.ServerPause, Target: "redis-1", Holder: "client-2", After: "in-critical-section"},
			heldAtFailpoint{nemesis.HeldAtFailpoint{Failpoint: "in-critical-section", Holder: 2}}, 2, "in-critical-section", ""},
		{"in a queue", nemesis.Step{Kind: nemesis.ClientKill, Target: "client-0", Holder: "client-1", Queue: true, After: "before-release"},
			inQueue{nemesis.InQueue{Failpoint: "before-release", Holder: 1, Waiter: 0}}, 1, "before-release", ""},
		{"holder without a failpoint", nemesis.Step{Kind: nemesis.ServerPause, Target: "redis-1", Holder: "client-0"},
			nil, 0, "", "needs a failpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := handlerOf(tc.step)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("handlerOf = %#v, %v; want an error containing %q", h, err, tc.err)
				}
				return
			}
			if err != nil || h != tc.want {
				t.Fatalf("handlerOf = %#v, %v; want %#v", h, err, tc.want)
			}
			if slot, fp := h.stopped(); slot != tc.slot || fp != tc.failpoint {
				t.Errorf("stopped() = %d, %q; want %d, %q", slot, fp, tc.slot, tc.failpoint)
			}
		})
	}
}

// TestHandlersOf: a schedule's handlers come in step order, and a step
// whose trigger cannot be read is named by its index.
func TestHandlersOf(t *testing.T) {
	s := nemesis.Schedule{Faults: []nemesis.Step{
		{Kind: nemesis.ClientPause, Target: "client-0", After: "after-acquire"},
		{At: nemesis.Duration(time.Second), Kind: nemesis.ClientPause, Target: nemesis.HolderTarget},
	}}
	hs, err := handlersOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := hs[0].(atFailpoint); !ok {
		t.Errorf("step 0's handler is %T, want atFailpoint", hs[0])
	}
	if _, ok := hs[1].(onHolder); !ok {
		t.Errorf("step 1's handler is %T, want onHolder", hs[1])
	}
	s.Faults = append(s.Faults, nemesis.Step{Kind: nemesis.ClientKill, Target: "client-0", Queue: true})
	if _, err := handlersOf(s); err == nil || !strings.HasPrefix(err.Error(), "fault 2: ") {
		t.Errorf("handlersOf = %v, want an error naming fault 2", err)
	}
}

// TestHolderServerNeedsHeld: only a holder held at a failpoint has a
// server to aim at; every other trigger refuses the target by name,
// before it asks the running system anything.
func TestHolderServerNeedsHeld(t *testing.T) {
	st := nemesis.Step{Kind: nemesis.NetPartitionClient, Target: nemesis.HolderServerTarget, Duration: nemesis.Duration(time.Second)}
	for _, h := range []triggerHandler{atTime{}, atFailpoint{}, inQueue{}} {
		f := &strike{st: st, target: st.Target, shown: st.Target}
		err := h.aim(context.Background(), &scheduleRun{}, f)
		want := "fault 0 (net-partition-client holder-server): the holder's server needs a holder held at a failpoint"
		if err == nil || err.Error() != want {
			t.Errorf("%T.aim = %v, want %q", h, err, want)
		}
	}
}
