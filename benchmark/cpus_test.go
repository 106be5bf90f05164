package benchmark

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCPUSplit: the server side gets one CPU, this process the others,
// every thread of each, and undo gives this process back what it had.
func TestCPUSplit(t *testing.T) {
	split, err := newCPUSplit()
	if err != nil {
		t.Fatal(err)
	}
	if split == nil {
		t.Skip("one CPU: nothing to split")
	}
	// A stand-in for a server process.
	server := exec.Command("sleep", "30")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()
	if err := split.apply([]int{server.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := split.undo(); err != nil {
			t.Error(err)
		}
		var now unix.CPUSet
		if err := unix.SchedGetaffinity(0, &now); err != nil || now != split.before {
			t.Errorf("after undo this process has CPUs %s (%v), want %s", cpuList(&now), err, cpuList(&split.before))
		}
	}()
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(server.Process.Pid, &got); err != nil {
		t.Fatal(err)
	}
	if got != split.servers || got.Count() != 1 {
		t.Errorf("server on CPUs %s, want the one CPU %s", cpuList(&got), cpuList(&split.servers))
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		var mine unix.CPUSet
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedGetaffinity(tid, &mine); err != nil {
			continue // the thread ended
		}
		if mine != split.clients {
			t.Errorf("client thread %d on CPUs %s, want %s", tid, cpuList(&mine), cpuList(&split.clients))
		}
		if mine.IsSet(lastCPU(&split.servers)) {
			t.Errorf("client thread %d shares the servers' CPU", tid)
		}
	}
	if s := split.String(); !strings.Contains(s, "servers pinned to CPU "+cpuList(&split.servers)) {
		t.Errorf("String() = %q", s)
	}
}
