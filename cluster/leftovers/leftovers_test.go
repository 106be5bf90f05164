package leftovers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseOwner(t *testing.T) {
	tests := []struct {
		in   string
		want Owner
		ok   bool
	}{
		{"4242:98765\n", Owner{4242, "98765"}, true},
		{"4242:98765", Owner{4242, "98765"}, true},
		{"4242", Owner{}, false},
		{"4242:", Owner{}, false},
		{":98765", Owner{}, false},
		{"-1:98765", Owner{}, false},
		{"", Owner{}, false},
		{"42", Owner{}, false}, // half-written by MakeDir
	}
	for _, tc := range tests {
		got, err := ParseOwner(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseOwner(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// exited returns the owner of a process that has exited and been reaped.
func exited(t *testing.T) Owner {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	st, ok := StartTime(cmd.Process.Pid)
	if !ok {
		st = "1"
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return Owner{PID: cmd.Process.Pid, Start: st}
}

// sleeper starts a process that stays alive until the test ends.
func sleeper(t *testing.T) Owner {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	st, ok := StartTime(cmd.Process.Pid)
	if !ok {
		t.Fatal("no start time for a running process")
	}
	return Owner{PID: cmd.Process.Pid, Start: st}
}

// zombie returns the owner of a child that has exited but is not reaped.
func zombie(t *testing.T) Owner {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	pid := cmd.Process.Pid
	st, _ := StartTime(pid)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if state, _, _ := statFields(b); state == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child never became a zombie")
		}
	}
	return Owner{PID: pid, Start: st}
}

func TestOwnerAlive(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		owner Owner
		want  bool
	}{
		{"this process", self, true},
		{"another live process", sleeper(t), true},
		{"its pid reused by another process", Owner{PID: self.PID, Start: self.Start + "0"}, false},
		{"exited and reaped", exited(t), false},
		{"exited, not yet reaped (zombie)", zombie(t), false},
		{"no such pid", Owner{PID: 1 << 30, Start: "1"}, false},
	}
	for _, tc := range tests {
		if got := tc.owner.Alive(); got != tc.want {
			t.Errorf("%s: %v.Alive() = %v, want %v", tc.name, tc.owner, got, tc.want)
		}
	}
}

// TestSweepDirs: only the lab's dirs whose owner is gone are removed; a
// live owner's (this process's or another's), an unmarked dir, a
// half-written marker and a non-lab dir stay.
func TestSweepDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		dir    string
		marker string // "" writes no marker
		swept  bool
	}{
		{"this process's", "locklab-run-1", self.String(), false},
		{"another live lab's", "locklab-run-2", sleeper(t).String(), false},
		{"a dead run's", "locklab-redis-1-3", exited(t).String(), true},
		{"a dead run's whose pid was reused", "locklab-run-4", Owner{PID: self.PID, Start: self.Start + "0"}.String(), true},
		{"a zombie run's", "locklab-explore-5", zombie(t).String(), true},
		{"unmarked", "locklab-run-6", "", false},
		{"marker half written", "locklab-run-7", strconv.Itoa(exited(t).PID), false},
		{"not the lab's", "other-run-8", exited(t).String(), false},
	}
	for _, tc := range tests {
		d := filepath.Join(tmp, tc.dir)
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if tc.marker != "" {
			if err := os.WriteFile(filepath.Join(d, markerName), []byte(tc.marker), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := SweepDirs(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		_, err := os.Stat(filepath.Join(tmp, tc.dir))
		if gone := errors.Is(err, os.ErrNotExist); gone != tc.swept {
			t.Errorf("%s (%s): removed %v, want %v", tc.name, tc.dir, gone, tc.swept)
		}
	}
}

// TestMakeDirRemoveOwn: MakeDir's dir is in the temp dir, named for its
// kind, marked as this process's, listed by Stale until RemoveOwn removes it.
func TestMakeDirRemoveOwn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir, err := MakeDir("run")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "locklab-run-") {
		t.Errorf("MakeDir(run) = %s, want %s/locklab-run-*", dir, tmp)
	}
	b, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		t.Fatal(err)
	}
	if o, err := ParseOwner(string(b)); err != nil || o.PID != os.Getpid() || !o.Alive() {
		t.Errorf("marker %q: owner %v, %v; want this live process", b, o, err)
	}
	if err := SweepDirs(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("Sweep removed a live owner's dir: %v", err)
	}
	if stale, err := Stale(); err != nil || !slices.Equal(stale, []string{dir}) {
		t.Errorf("Stale() = %v, %v; want [%s] (this process's own, not yet removed)", stale, err, dir)
	}
	RemoveOwn()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveOwn left %s (%v)", dir, err)
	}
	if stale, err := Stale(); err != nil || len(stale) != 0 {
		t.Errorf("after RemoveOwn Stale() = %v, %v; want none", stale, err)
	}
}

// TestSweepCallsRegistered: Sweep calls every registered sweeper, even
// after one fails, and its error names the one that failed.
func TestSweepCallsRegistered(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var called []string
	Register("test-b", func(context.Context) error { called = append(called, "b"); return errors.New("engine gone") })
	Register("test-a", func(context.Context) error { called = append(called, "a"); return nil })
	t.Cleanup(func() {
		sweepersMu.Lock()
		delete(sweepers, "test-a")
		delete(sweepers, "test-b")
		sweepersMu.Unlock()
	})
	err := Sweep(context.Background())
	if !slices.Equal(called, []string{"a", "b"}) {
		t.Errorf("sweepers called %v, want [a b]", called)
	}
	if err == nil || !strings.Contains(err.Error(), "sweep test-b: engine gone") {
		t.Errorf("Sweep() = %v, want an error naming test-b", err)
	}
}

// TestCloseLeavesNoDir: dirs made side by side while the process closes
// (a Ctrl-C while cells start their servers) are all removed, and none is
// made after: a MakeDir either ran before Close, which removed its dir, or
// fails with ErrExiting.
func TestCloseLeavesNoDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	o := &ownDirs{dirs: map[string]struct{}{}}
	const makers = 8
	made := make(chan int, makers)
	var closed atomic.Bool
	for range makers {
		go func() {
			n := 0
			for {
				after := closed.Load()
				_, err := o.makeDir("redis-1")
				switch {
				case err == nil && after:
					t.Errorf("makeDir made a dir after Close returned")
				case err == nil:
					n++
					continue
				case !errors.Is(err, ErrExiting):
					t.Errorf("makeDir: %v, want ErrExiting once closed", err)
				}
				made <- n
				return
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	o.remove(true)
	closed.Store(true)
	total := 0
	for range makers {
		total += <-made
	}
	if total == 0 {
		t.Fatal("no dir was made before Close: the test would prove nothing")
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s is left after Close (%d dirs made)", e.Name(), total)
	}
	dir := filepath.Join(tmp, DirPrefix+"own-1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := o.own(dir); !errors.Is(err, ErrExiting) {
		t.Errorf("own after Close: %v, want ErrExiting", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("own after Close left %s (%v)", dir, err)
	}
}
