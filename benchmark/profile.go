package benchmark

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"

	"github.com/locklab/locklab/record"
)

// Where a lock's client CPU goes: a CPU profile of the lab's own process
// over the uncontended slices (interleave), each lock's own, so that a
// lock that falls short of its peer or of its round-trip bound shows where
// the difference lies: its own code, the client library it talks through,
// the lab's harness, the Go runtime, or the system calls every round trip
// makes, which no lock with as many round trips avoids. Starting and
// stopping a profile happen between slices, outside the measured windows.
// A guest's process is not profiled (its CPU is the guest runtime's), nor
// is the in-process mutex's, which has no round trip.

// lockPackages are third-party packages that are a lock rather than a
// client library: a peer's own code, counted as the lock's like ours under
// impls/. go-zookeeper's lock lives in its client package and is counted
// as the library's.
var lockPackages = []string{
	"github.com/bsm/redislock",
	"github.com/go-redsync/redsync",
	"go.etcd.io/etcd/client/v3/concurrency",
}

const labModule = "github.com/locklab/locklab/"

// cpuPart names the part of the code a sample's stack is charged to:
// system calls when the stack is in one (the round trip's reads and
// writes, the runtime's own polling), else the innermost frame outside
// the standard library decides (an allocation is charged to the code that
// asked for it), and a stack with none is the Go runtime's (scheduler,
// garbage collector).
func cpuPart(funcs []string) string {
	for _, fn := range funcs {
		if isSyscall(fn) {
			return record.PartSyscalls
		}
	}
	for _, fn := range funcs {
		pkg := packageOf(fn)
		switch {
		case isStandard(pkg):
			continue
		case strings.HasPrefix(pkg, labModule+"impls/"):
			return record.PartLock
		case strings.HasPrefix(pkg, labModule):
			return record.PartHarness
		}
		for _, p := range lockPackages {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return record.PartLock
			}
		}
		return record.PartLibrary
	}
	return record.PartRuntime
}

// isSyscall: the kernel entry points of Go's system calls, and the
// runtime's network poller (epoll), whose time is the kernel's too.
func isSyscall(fn string) bool {
	return strings.HasPrefix(fn, "syscall.") || strings.HasPrefix(fn, "internal/runtime/syscall.") ||
		fn == "runtime.netpoll" || fn == "runtime.futex" || fn == "runtime.epollwait" ||
		strings.HasPrefix(fn, "golang.org/x/sys/unix.")
}

// packageOf is the import path of a function's package:
// "github.com/redis/go-redis/v9.(*Client).Process" → its package, the text
// up to the first dot after the last slash.
func packageOf(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// isStandard: a standard library package has no dot in its first element.
func isStandard(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// cpuProfile is one profile in progress.
type cpuProfile struct {
	buf bytes.Buffer
	// cpuAtStart is processCPU when it started. The profile's samples
	// give the parts' shares, not the total: each thread's timer starts
	// afresh with every profile, and the CPU a thread used since its last
	// sample is lost at the stop (up to 10 ms a thread, every slice).
	cpuAtStart time.Duration
}

// startProfile starts profiling this process's CPU (100 samples a second
// of CPU time, the runtime's rate).
func startProfile() (*cpuProfile, error) {
	p := &cpuProfile{cpuAtStart: processCPU()}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		return nil, fmt.Errorf("start a CPU profile: %w", err)
	}
	return p, nil
}

// processCPU is the CPU time this process's threads have used, user and
// system, as the kernel counts it (one getrusage call: cheap enough to
// read around every slice, where the per-thread reading of cpuSides is
// not).
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stop ends the profile and adds its samples to parts, by cpuPart, in
// nanoseconds of CPU; it returns how many samples there were.
func (p *cpuProfile) stop(parts map[string]float64) (int, error) {
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return 0, fmt.Errorf("read the CPU profile: %w", err)
	}
	cpu, count := -1, -1
	for i, st := range prof.SampleType {
		switch st.Type {
		case "cpu":
			cpu = i
		case "samples":
			count = i
		}
	}
	if cpu < 0 || count < 0 {
		return 0, fmt.Errorf("the CPU profile lacks the cpu or samples type (%v)", prof.SampleType)
	}
	n := 0
	for _, s := range prof.Sample {
		var funcs []string
		for _, loc := range s.Location {
			// Inlined calls come first in a location's lines, innermost
			// first, as the stack does.
			for _, ln := range loc.Line {
				if ln.Function != nil {
					funcs = append(funcs, ln.Function.Name)
				}
			}
		}
		parts[cpuPart(funcs)] += float64(s.Value[cpu])
		n += int(s.Value[count])
	}
	return n, nil
}

// addParts adds src's CPU by part to dst (made when nil) and returns it.
func addParts(dst, src map[string]float64) map[string]float64 {
	if dst == nil {
		dst = map[string]float64{}
	}
	for part, ns := range src {
		dst[part] += ns
	}
	return dst
}

// profiled says whether a lock's uncontended window is profiled: a lock
// whose clients run in this process and make round trips.
func profiled(backend string, guest bool) bool {
	return !guest && backend != inProcess
}
