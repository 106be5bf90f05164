package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/runner"
)

// TestExplore explores the two controls and one real lock briefly, with
// fixed seeds. `none` must be caught and its shrunk schedule must replay
// to the same verdict; `local-mutex` cannot be explored (its clients share
// one process) and says why; redis-setnx-px with fencing must stay safe
// under client crashes and pauses (as the expectation table says), server
// pauses, client|server partitions and a slow network (a stale holder's
// write carries an old token, and the resource refuses it). After each, no worker, server or
// network namespace of this process may be left.
func TestExplore(t *testing.T) {
	if testing.Short() {
		t.Skip("explore runs real servers for a minute")
	}
	tests := []struct {
		name     string
		impl     string
		fencing  bool
		kinds    []string
		duration time.Duration
		// want is the verdict class; "" means explore must refuse, with
		// refuse in its reason.
		want   checker.Verdict
		refuse string
	}{
		{name: "none is caught", impl: "none", duration: 10 * time.Second, want: checker.Unsafe},
		{name: "local-mutex is skipped", impl: "local-mutex", duration: 10 * time.Second, refuse: "share one process"},
		{name: "redis-setnx-px fenced under client faults, server pauses, partitions and delay", impl: "redis-setnx-px", fencing: true,
			kinds:    []string{nemesis.ClientKill, nemesis.ClientPause, nemesis.ServerPause, nemesis.NetPartitionClient, nemesis.NetDelay},
			duration: 30 * time.Second, want: checker.Safe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := impls.Lookup(tc.impl)
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(tc.kinds, nemesis.IsNetwork) && hosts.Available() != nil {
				t.Skipf("network faults need hosts: %v", hosts.Available())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			out := t.TempDir()
			o := engine.ExploreOptions{Impl: spec, Fencing: tc.fencing, Seed: 11, TTL: time.Second, Clients: 4,
				Duration: tc.duration, Kinds: tc.kinds, Replays: 3, ShrinkBudget: time.Minute, OutDir: out, Logf: t.Logf}
			defer assertNothingLeft(t)
			x, err := engine.Explore(ctx, o)
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) {
					t.Fatalf("explore %s: err %v, want a refusal naming %q", tc.impl, err, tc.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := x.Run.Decision
			t.Logf("%s: %s (%s); %d sections; injected %v", tc.impl, d.Verdict, d.Detail, d.Sections, record.Tally(x.Run.Injected))
			if d.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", d.Verdict, d.Detail, tc.want)
			}
			injected := 0
			for _, n := range x.Run.Injected {
				injected += n
			}
			if injected != len(x.Schedule.Faults) || injected == 0 {
				t.Errorf("injected %d faults, the schedule has %d", injected, len(x.Schedule.Faults))
			}
			if !checker.Failed(d.Verdict) {
				if x.Minimal != nil {
					t.Errorf("a %s run was shrunk", d.Verdict)
				}
				return
			}
			if x.Minimal == nil || x.Minimal.Verdict != string(tc.want) {
				t.Fatalf("no minimal schedule recorded with verdict %s: %+v", tc.want, x.Minimal)
			}
			if len(x.Minimal.Faults) > len(x.Schedule.Faults) || x.Minimal.Duration > x.Schedule.Duration {
				t.Errorf("the minimal schedule (%d faults, %v) is not smaller than the original (%d, %v)",
					len(x.Minimal.Faults), time.Duration(x.Minimal.Duration), len(x.Schedule.Faults), time.Duration(x.Schedule.Duration))
			}
			for _, f := range []string{x.ScheduleFile, x.HistoryFile, x.HTMLFile} {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("counterexample file: %v", err)
				}
			}
			// The file, not the value in memory, is what a reader replays.
			s, err := nemesis.Load(x.ScheduleFile)
			if err != nil {
				t.Fatal(err)
			}
			if !replaysTo(ctx, t, s, tc.want, 3) {
				t.Fatalf("the minimal schedule did not replay to %s in 3 runs", tc.want)
			}
		})
	}
}

// replaysTo reports whether any of n replays of s reaches verdict want.
func replaysTo(ctx context.Context, t *testing.T, s nemesis.Schedule, want checker.Verdict, n int) bool {
	for i := 0; i < n; i++ {
		r, err := engine.RunSchedule(ctx, s, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("replay %d: %s (%s)", i+1, r.Decision.Verdict, r.Decision.Detail)
		if r.Decision.Verdict == want {
			return true
		}
	}
	return false
}

// assertNothingLeft fails the test if a process the lab started, or any
// child of this test process, still runs.
func assertNothingLeft(t *testing.T) {
	t.Helper()
	if pids := cluster.LivePIDs(); len(pids) > 0 {
		t.Errorf("processes still tracked after the run: %v", pids)
	}
	if held := netfault.Holding(); len(held) > 0 {
		t.Errorf("packets still held (a delay never healed): %v", held)
	}
	me := strconv.Itoa(os.Getpid())
	for _, ns := range hosts.Leftovers() {
		// Other runs on this machine have namespaces of their own.
		if strings.HasPrefix(ns, hosts.Prefix+me+"-") {
			t.Errorf("network namespace left after the run: %s", ns)
		}
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, ppid.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == me && f[0] != "Z" {
			t.Errorf("child process still running after the run: %s", strings.TrimSpace(s[:strings.LastIndexByte(s, ')')+1]))
		}
	}
}

// TestHolderTarget: a fault aimed at the holder strikes the client inside
// its critical section at that moment, whichever it is, and the history
// names it. A pause of the holder past its lease breaks an unfenced
// redis-setnx-px whenever another client is granted the expired lock
// while the holder still has its write to make: the checker must then call
// the run unsafe. Aimed at a fixed slot instead, the same pause mostly finds
// a waiter and proves nothing, which is why explore aims half its client
// faults at the holder.
//
// A pause can miss that window (in container mode 1 run of 4 came out
// safe): it can land after the holder's write, or the others can leave the
// freed lock alone until the holder has written. Such a run shows nothing
// about the checker, so the schedule runs again, up to holderTargetRuns
// times, until one run has the overlap.
func TestHolderTarget(t *testing.T) {
	ctx := context.Background()
	s := nemesis.Schedule{Impl: "redis-setnx-px", TTL: nemesis.Duration(time.Second), Clients: 4,
		Duration: nemesis.Duration(9 * time.Second),
		Faults: []nemesis.Step{{At: nemesis.Duration(time.Second), Kind: nemesis.ClientPause,
			Target: nemesis.HolderTarget, Duration: nemesis.Duration(2 * time.Second)}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	defer assertNothingLeft(t)
	for run := 1; ; run++ {
		r, err := engine.RunSchedule(ctx, s, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		overlap, why := holderTargetRun(t, r.Events)
		switch {
		case overlap && r.Decision.Verdict != checker.Unsafe:
			t.Fatalf("verdict %s (%s), want unsafe: %s", r.Decision.Verdict, r.Decision.Detail, why)
		case overlap:
			t.Logf("run %d: %s: unsafe, as it must be", run, why)
			return
		case run == holderTargetRuns:
			t.Fatalf("in %d runs the paused holder never wrote after another client's grant (last: %s)", run, why)
		default:
			t.Logf("run %d: %s (verdict %s); again", run, why, r.Decision.Verdict)
		}
	}
}

// holderTargetRuns bounds TestHolderTarget's runs: at the 1 in 4 seen in
// container mode, three misses in a row come once in about 64 runs of the
// test.
const holderTargetRuns = 3

// holderTargetRun checks that the run's one fault was a client-pause of
// the holder, recorded with the client it struck, which was inside its
// section then; and says whether the run had the lost update a correct
// checker must catch, with what it found: the holder read before the pause
// and its write succeeded, and another client read the same value while
// the holder was paused and its write succeeded too (two writes of one
// value read, which no order of the sections explains; a holder whose
// write landed before the pause, its reply read after, leaves the others
// a newer value).
func holderTargetRun(t *testing.T, events []lin.Event) (overlap bool, why string) {
	t.Helper()
	var fault *lin.Event
	for i, e := range events {
		if e.Kind == lin.Fault {
			fault = &events[i]
		}
	}
	if fault == nil {
		t.Fatal("no fault in the history")
	}
	inj := fault.Injection
	if inj == nil || inj.Kind != nemesis.ClientPause || inj.Target != nemesis.HolderTarget || len(inj.Clients) != 1 {
		t.Fatalf("the fault %+v is not recorded as a client-pause of the holder, naming the client it struck", inj)
	}
	slot := inj.Clients[0]
	// No client was replaced, so the slot is the client id.
	var granted int64
	in := false
	for _, e := range events {
		if e.Client == slot && e.Time < fault.Time {
			switch e.Kind {
			case lin.Acquired:
				in, granted = true, e.Time
			case lin.Released:
				in = false
			}
		}
	}
	if !in {
		t.Fatalf("client %d was not inside its section when %q struck", slot, fault.Text)
	}
	// ops are each client's sections by op number: when it read, and how
	// it ended.
	type op struct {
		read  int64
		value int64
		end   lin.Status
	}
	ops := map[[2]int64]*op{}
	at := func(e lin.Event) *op {
		k := [2]int64{int64(e.Client), e.Op}
		if ops[k] == nil {
			ops[k] = &op{}
		}
		return ops[k]
	}
	var held *op // the holder's section under the paused grant
	for _, e := range events {
		switch e.Kind {
		case lin.Read:
			at(e).read, at(e).value = e.Time, e.Value
		case lin.Return:
			at(e).end = e.Status
		case lin.Call:
			if e.Client == slot && e.Time > granted && held == nil {
				held = at(e)
			}
		}
	}
	switch {
	case held == nil || held.read == 0:
		return false, fmt.Sprintf("client %d read nothing under the paused grant", slot)
	case held.read > fault.Time:
		return false, fmt.Sprintf("client %d was paused before it read", slot)
	case held.end != lin.OK:
		return false, fmt.Sprintf("client %d's section under the paused grant ended %s, without a write", slot, held.end)
	}
	for k, o := range ops {
		if int(k[0]) != slot && o.read > fault.Time && o.read < fault.End && o.value == held.value && o.end == lin.OK {
			return true, fmt.Sprintf("client %d read %d and wrote while client %d, which had read %d before the pause, was paused; "+
				"both writes succeeded", k[0], o.value, slot, held.value)
		}
	}
	return false, fmt.Sprintf("client %d read %d before the pause and wrote, but no other client read that value and wrote while it was paused", slot, held.value)
}

func TestMain(m *testing.M) {
	runner.MaybeRunWorker()
	// Stops every server; a lab dir left behind fails the binary.
	os.Exit(cluster.EndOfTests(m.Run()))
}
