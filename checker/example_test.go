package checker_test

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/checker"
	lin "github.com/locklab/locklab/linearizability"
)

// section records one critical section of client c: granted the lock at t,
// it reads the counter's value read and writes read+1.
func section(c int, t, op, read int64) []lin.Event {
	return []lin.Event{
		{Kind: lin.Acquired, Time: t, Client: c},
		{Kind: lin.Call, Time: t + 1, Client: c, Op: op},
		{Kind: lin.Read, Time: t + 2, Client: c, Op: op, Value: read},
		{Kind: lin.Return, Time: t + 3, Client: c, Op: op, Status: lin.OK, Value: read + 1},
	}
}

// Two clients each increment the protected counter once. In order, the
// history is linearizable. When both read 0 and write 1, two holders were
// in their sections at once: porcupine finds no sequential order, and the
// run is unsafe.
func ExampleDecide() {
	inOrder := append(section(0, 10, 1, 0), section(1, 20, 2, 1)...)
	lostUpdate := []lin.Event{
		{Kind: lin.Call, Time: 1, Client: 0, Op: 1}, {Kind: lin.Call, Time: 2, Client: 1, Op: 2},
		{Kind: lin.Read, Time: 3, Client: 0, Op: 1, Value: 0}, {Kind: lin.Read, Time: 4, Client: 1, Op: 2, Value: 0},
		{Kind: lin.Return, Time: 5, Client: 0, Op: 1, Status: lin.OK, Value: 1},
		{Kind: lin.Return, Time: 6, Client: 1, Op: 2, Status: lin.OK, Value: 1},
	}
	for _, events := range [][]lin.Event{inOrder, lostUpdate} {
		// A zero Minimum judges even a history this small.
		d := checker.Decide(checker.Input{Events: events, TTL: time.Second, Timeout: 10 * time.Second})
		line := fmt.Sprintf("%s over %d sections", d.Verdict, d.Sections)
		if d.Detail != "" {
			line += ": " + d.Detail
		}
		fmt.Println(line)
	}
	// Output:
	// safe over 2 sections
	// unsafe over 2 sections: porcupine found no sequential order: two holders' sections overlapped
}

// A cell's verdict is its worst run's; runs whose fault never reached the
// lock are left out, and a cell is safe only when most of its clean runs
// exercised the fault.
func ExampleCellVerdict() {
	fmt.Println(checker.CellVerdict([]checker.Verdict{checker.Safe, checker.NotApplicable, checker.Safe}))
	fmt.Println(checker.CellVerdict([]checker.Verdict{checker.Safe, checker.NotExercised, checker.Safe}))
	fmt.Println(checker.CellVerdict([]checker.Verdict{checker.Safe, checker.NotExercised, checker.NotExercised}))
	fmt.Println(checker.CellVerdict([]checker.Verdict{checker.Safe, checker.Unsafe, checker.Inconclusive}))
	fmt.Println(checker.CellVerdict([]checker.Verdict{checker.NotApplicable, checker.NotApplicable}))
	// Output:
	// safe
	// safe
	// not exercised
	// unsafe
	// n/a
}

// A mutant is caught by a cell whose verdict moves from the expected one to
// a failure, if the same cell passes without the mutant.
func ExampleCaught() {
	fmt.Println(checker.Caught(checker.Safe, checker.Unsafe, checker.Safe))
	fmt.Println(checker.Caught(checker.Safe, checker.Unsafe, checker.Unsafe))
	fmt.Println(checker.CannotCatch(checker.Unsafe))
	// Output:
	// true
	// false
	// expected unsafe already
}

// What each verdict means to the code that acts on it: the engine keeps
// porcupine's page for a safety violation, the shrinker blames the fault
// after which grants stopped for a liveness one, and a cell left out of a
// lock's account is one whose fault never reached it.
func ExampleVerdicts() {
	for _, v := range checker.Verdicts() {
		fmt.Printf("%-13s failed=%-5v safety=%-5v liveness=%-5v applicable=%v\n", v,
			checker.Failed(v), checker.SafetyViolated(v), checker.LivenessViolated(v), checker.Applicable(v))
	}
	// Output:
	// safe          failed=false safety=false liveness=false applicable=true
	// unavailable   failed=false safety=false liveness=false applicable=true
	// not exercised failed=false safety=false liveness=false applicable=true
	// inconclusive  failed=false safety=false liveness=false applicable=true
	// stuck         failed=true  safety=false liveness=true  applicable=true
	// unknown       failed=false safety=false liveness=false applicable=true
	// unsafe        failed=true  safety=true  liveness=false applicable=true
	// n/a           failed=false safety=false liveness=false applicable=false
}
