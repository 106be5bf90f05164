package benchmark

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// cpuSplit keeps the lab's servers and this process (every lock's clients)
// on different CPUs for a run. On two shared cores a Redis server and eight
// client goroutines otherwise take turns on the same core at the
// scheduler's whim, and a one-second window measures that turn-taking as
// much as the lock: one CPU for the servers, the rest for the clients.
type cpuSplit struct {
	servers, clients unix.CPUSet
	before           unix.CPUSet // this process's set before the split
}

// newCPUSplit gives the servers the last CPU this process may use and the
// clients the others; with fewer than two there is nothing to split.
func newCPUSplit() (*cpuSplit, error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return nil, fmt.Errorf("read this process's CPUs: %w", err)
	}
	if all.Count() < 2 {
		return nil, nil
	}
	s := &cpuSplit{before: all}
	last := lastCPU(&all)
	s.clients = all
	s.clients.Clear(last)
	s.servers.Set(last)
	return s, nil
}

// maxCPUs is how many CPUs a unix.CPUSet holds.
const maxCPUs = 1024

// apply pins every thread of each server process to the servers' CPU and
// every thread of this process to the clients' CPUs. Threads made later
// inherit their maker's set, and a PostgreSQL backend its postmaster's.
func (s *cpuSplit) apply(serverPIDs []int) error {
	for _, pid := range serverPIDs {
		if err := setProcess(pid, &s.servers); err != nil {
			return fmt.Errorf("pin server %d: %w", pid, err)
		}
	}
	if err := setProcess(os.Getpid(), &s.clients); err != nil {
		return fmt.Errorf("pin the clients: %w", err)
	}
	return nil
}

// undo gives this process back every CPU it had (the servers go with the
// run).
func (s *cpuSplit) undo() error {
	return setProcess(os.Getpid(), &s.before)
}

// String says where each side runs, for the report.
func (s *cpuSplit) String() string {
	if s == nil {
		return fmt.Sprintf("servers and clients share the machine's %d CPUs", runtime.NumCPU())
	}
	return fmt.Sprintf("servers pinned to CPU %s, clients (this process) to CPU %s", cpuList(&s.servers), cpuList(&s.clients))
}

func cpuList(set *unix.CPUSet) string {
	out := ""
	for c := 0; c < maxCPUs; c++ {
		if set.IsSet(c) {
			if out != "" {
				out += ","
			}
			out += strconv.Itoa(c)
		}
	}
	return out
}

// setProcess sets the CPUs of every thread of pid. A thread that ends
// between the listing and the call is no error; a process that is gone is.
func setProcess(pid int, set *unix.CPUSet) error {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}

// lastCPU is the highest CPU of set (-1: none).
func lastCPU(set *unix.CPUSet) int {
	last := -1
	for c := 0; c < maxCPUs; c++ {
		if set.IsSet(c) {
			last = c
		}
	}
	return last
}
