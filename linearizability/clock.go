// Package linearizability records what clients and faults did as a history,
// turns it into porcupine operations, checks it against a model of the
// protected resource, and writes porcupine's HTML timeline for a history
// that is not linearizable.
package linearizability

import "golang.org/x/sys/unix"

// Now reads CLOCK_MONOTONIC in nanoseconds. The kernel keeps one such clock
// for the whole machine, so stamps from different worker processes can be
// merged into one history; and it never jumps, whatever a scenario does to
// wall clocks (libfaketime is only ever loaded into servers, never here).
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}
