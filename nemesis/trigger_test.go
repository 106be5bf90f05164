package nemesis

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestStepTrigger(t *testing.T) {
	sec := Duration(time.Second)
	for _, tc := range []struct {
		name string
		step Step
		want Trigger
		err  string
	}{
		{"at a time", Step{At: sec, Kind: ServerPause, Target: "redis-1"}, AtTime{At: time.Second}, ""},
		{"on the holder", Step{At: sec, Kind: ClientPause, Target: HolderTarget}, OnHolder{At: time.Second}, ""},
		{"at a failpoint", Step{Kind: ClientPause, Target: "client-0", After: "after-acquire"},
			AtFailpoint{Failpoint: "after-acquire", Client: 0}, ""},
		{"held at a failpoint", Step{Kind: ServerPause, Target: "redis-1", Holder: "client-2", After: "in-critical-section"},
			HeldAtFailpoint{Failpoint: "in-critical-section", Holder: 2}, ""},
		{"held, going on in the fault", Step{Kind: NetSplitWithHolder, Target: MasterTarget, Holder: "client-0", After: "before-wait", GoesOn: InFault},
			HeldAtFailpoint{Failpoint: "before-wait", Holder: 0, InFault: true}, ""},
		{"in a queue", Step{Kind: ClientKill, Target: "client-0", Holder: "client-1", Queue: true, After: "before-release"},
			InQueue{Failpoint: "before-release", Holder: 1, Waiter: 0}, ""},
		{"holder without a failpoint", Step{Kind: ServerPause, Target: "redis-1", Holder: "client-0"}, nil, "needs a failpoint"},
		{"queue without a failpoint", Step{Kind: ClientKill, Target: "client-0", Queue: true}, nil, "needs a failpoint"},
		{"holder struck itself", Step{Kind: ClientKill, Target: "client-0", Holder: "client-0", After: "after-acquire"}, nil, "name no holder"},
		{"failpoint on a server", Step{Kind: ServerPause, Target: "redis-1", After: "after-acquire"}, nil, "stops a client"},
		{"queue waiter not a client", Step{Kind: ClientKill, Target: "redis-1", Holder: "client-1", Queue: true, After: "before-release"}, nil, "strikes a waiter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.step.Trigger()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Trigger() = %v, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Trigger() = %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}

// A step's trigger is read from its fields: here the holder stays at its
// failpoint inside its section while the fault strikes the lock's server.
func ExampleStep_Trigger() {
	st := Step{Kind: ServerPause, Target: "redis-1", Holder: "client-0", After: "in-critical-section", Duration: Duration(2 * time.Second)}
	t, err := st.Trigger()
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T: %+v\n", t, t)
	// Output: nemesis.HeldAtFailpoint: {Failpoint:in-critical-section Holder:0 InFault:false InLease:false OnceReplicated:false}
}
