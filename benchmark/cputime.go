package benchmark

import (
	"fmt"
	"os"
	"time"

	"github.com/prometheus/procfs"
)

// cpuUse is the CPU time two sides of a measurement have used so far, as
// the kernel counts it (every thread's run time, in nanoseconds): what the
// lock costs each side, beside how fast it went. It was meant to hold
// still where rates do not (a program that takes the core makes work wait,
// not more work); on this shared machine it moved as much as the rates,
// which says the CPU's own speed changes from second to second.
type cpuUse struct {
	// clients: this process and the processes the measured lockers run in
	// (a guest's runtime, when the lock is a guest), with every process
	// they started; not the other locks' guests, idle in the run's pool.
	clients time.Duration
	// servers: the lock's own servers (their processes and every process
	// they started, as PostgreSQL's and MariaDB's backends), not the
	// protected resource's nor other backends'.
	servers time.Duration
	// known: the servers are processes of this machine (not external).
	known bool
}

// cpuSides are the processes of each side, found once before a window.
type cpuSides struct{ clients, servers []int }

// newCPUSides finds them: lockPIDs are the lock's servers, allServerPIDs
// every server the lab started (left out of the clients), guestPIDs the
// processes the measured lockers run in, each with every process it
// started.
func newCPUSides(lockPIDs, allServerPIDs, guestPIDs []int) (*cpuSides, error) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // ended since the listing
		}
		children[st.PPID] = append(children[st.PPID], p.PID)
	}
	tree := func(roots []int) map[int]bool {
		seen := map[int]bool{}
		stack := append([]int(nil), roots...)
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if pid <= 0 || seen[pid] {
				continue
			}
			seen[pid] = true
			stack = append(stack, children[pid]...)
		}
		return seen
	}
	servers := tree(allServerPIDs)
	s := &cpuSides{clients: []int{os.Getpid()}}
	for pid := range tree(guestPIDs) {
		if !servers[pid] && pid != os.Getpid() {
			s.clients = append(s.clients, pid)
		}
	}
	for pid := range tree(lockPIDs) {
		s.servers = append(s.servers, pid)
	}
	return s, nil
}

// sample reads both sides' run time now, the clients' first.
func (s *cpuSides) sample() cpuUse {
	var u cpuUse
	for _, pid := range s.clients {
		u.clients += runTime(pid)
	}
	for _, pid := range s.servers {
		u.servers += runTime(pid)
	}
	u.known = len(s.servers) > 0
	return u
}

// runTime sums the run time of every thread of pid (0 if it has ended).
func runTime(pid int) time.Duration {
	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return 0
	}
	var ns uint64
	for _, t := range threads {
		if s, err := t.Schedstat(); err == nil {
			ns += s.RunningNanoseconds
		}
	}
	return time.Duration(ns)
}

// perGrant is each side's CPU time between two samples per grant, in µs.
func (u cpuUse) perGrant(since cpuUse, grants int) (client, server float64, ok bool) {
	if grants == 0 {
		return 0, 0, false
	}
	client = float64(u.clients-since.clients) / float64(time.Microsecond) / float64(grants)
	server = float64(u.servers-since.servers) / float64(time.Microsecond) / float64(grants)
	return client, server, u.known && since.known
}
