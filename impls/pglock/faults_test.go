package pglock_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
)

// PostgreSQL's backends and auxiliary processes each call setsid(), so a
// signal to the postmaster's process group does not reach them. These
// helpers find them by their parent instead.

// children returns the pids whose parent is pid, from /proc.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces: the
		// fields after the last ')' are state, ppid, ...
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, child)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie (a zombie holds no
// shared memory any more).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// pauseServer stops the postmaster first (so it forks nothing more), then
// every child; the returned func continues them all.
func pauseServer(t *testing.T, n *cluster.Node) (resume func()) {
	t.Helper()
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	kids := children(n.PID())
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGSTOP)
	}
	return func() {
		for _, k := range kids {
			syscall.Kill(k, syscall.SIGCONT)
		}
		if err := n.Resume(); err != nil {
			t.Fatal(err)
		}
	}
}

// killServer SIGKILLs the postmaster and every child and waits until they
// are gone, so that a restart finds the shared memory free.
func killServer(t *testing.T, n *cluster.Node) {
	t.Helper()
	if err := n.Pause(); err != nil { // no more forks while we list the children
		t.Fatal(err)
	}
	kids := children(n.PID())
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range kids {
		for alive(k) {
			if time.Now().After(deadline) {
				t.Fatalf("postgres child %d still alive after SIGKILL", k)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
