package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/report"
)

// exploreChildEnv makes this test binary run `bench` with the arguments in
// the variable (space-separated), as the real binary would: the signal
// tests need a lab process of its own to interrupt and kill. It is read in
// init, before TestMain, and unset before anything runs, so the workers the
// child re-executes are workers, not more children.
const exploreChildEnv = "LOCKLAB_EXPLORE_CHILD"

func init() {
	args := os.Getenv(exploreChildEnv)
	if args == "" {
		return
	}
	os.Unsetenv(exploreChildEnv)
	os.Args = append([]string{os.Args[0]}, strings.Fields(args)...)
	main()
}

// Bad input to explore and to check -schedule: a usage error naming what
// is wrong, before any server starts, and no file written.
func TestExploreBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.schedule.json")
	if err := os.WriteFile(bad, []byte(`{"impl":"none","ttl":"1s","clients":4,"duration":"10s","faults":[{"at":"1s","kind":"server-pause","target":"redis-1","duration":"1s"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"explore"}, "needs -impl"},
		{[]string{"explore", "-impl", "nope"}, "redis-setnx-px"},
		{[]string{"explore", "-impl", "local-mutex"}, "share one process"},
		{[]string{"explore", "-impl", "none", "-kinds", "meteor"}, "unknown fault kind"},
		{[]string{"explore", "-impl", "none", "-kinds", "net-delay"}, "no fault kind asked for applies to none"},
		{[]string{"explore", "-impl", "none", "-fencing"}, "no fencing tokens"},
		{[]string{"explore", "-impl", "none", "-duration", "0s"}, "must be positive"},
		{[]string{"explore", "-impl", "none,nope"}, "redis-setnx-px"},
		{[]string{"explore", "-impl", "all", "-fixed", "holder-partition"}, "takes no -fixed"},
		{[]string{"explore", "-impl", "all", "-rerun-without", "meteor"}, "unknown fault kind"},
		{[]string{"explore", "-impl", "all", "-replay-checks", "0"}, "-replay-checks and -seeds at least 1"},
		{[]string{"explore", "-impl", "all", "-seeds", "0"}, "-seeds at least 1"},
		{[]string{"explore", "-impl", "none", "-seeds", "2"}, "-seeds explores each lock of -impl all"},
		{[]string{"check", "-schedule", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"check", "-schedule", bad}, "does not apply"},
		{[]string{"check", "-schedule", bad, "-impl", "none"}, "drop -impl"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := t.TempDir()
			var buf bytes.Buffer
			args := append([]string{tt.args[0], "-out", out}, tt.args[1:]...)
			err := run(context.Background(), args, &buf, &buf)
			if !errors.Is(err, errUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("bad input wrote files: %v", entries)
			}
		})
	}
}

// TestExploreSignals: a `bench explore` interrupted (Ctrl-C) mid-run exits
// non-zero, leaves no result file in -out though one lock's counterexample
// was already found, and leaves no namespace (with it every firewall rule
// and qdisc of its hosts, which live only inside them), scratch directory
// or process; a SIGKILLed one leaves them until the next run, whose start
// sweeps them.
func TestExploreSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers")
	}
	if err := hosts.Available(); err != nil {
		t.Skip(err)
	}
	// none is caught and shrunk first (its counterexample goes to the
	// scratch dir), then redis-setnx-px runs on hosts: seed 4 opens with
	// its holder crashed in its section, then draws two client partitions,
	// so the run is on hosts from its start (20 s: in 10, nothing fits
	// after the opening, and a run with no network fault has no hosts).
	// The child logs its first fault once it is in place, so the signal
	// lands mid-run.
	args := "explore -impl none,redis-setnx-px -kinds client-kill,net-partition-client -duration 20s -seed 4 -shrink-time 5s -replays 1"
	tests := []struct {
		name     string
		sig      syscall.Signal
		wantExit int // -1: killed
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGKILL then a new run", syscall.SIGKILL, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			// A temp dir of the child's own, readable by others as /tmp
			// is: whatever the run leaves there is seen.
			tmp := t.TempDir()
			if err := os.Chmod(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), exploreChildEnv+"="+args+" -out "+out, "TMPDIR="+tmp)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			pid := cmd.Process.Pid
			// Mid-run: redis-setnx-px's servers and hosts are up and its
			// first fault is in.
			if err := waitForLines(stderr, "exploring redis-setnx-px", "fault 1/"); err != nil {
				t.Fatalf("child: %v", err)
			}
			go io.Copy(io.Discard, stderr)
			nss := namespacesOf(pid)
			if len(nss) == 0 {
				t.Fatal("the child runs on no hosts of its own: the test would prove nothing")
			}
			procs := descendants(pid)
			if len(procs) == 0 {
				t.Fatal("the child has no servers or workers running")
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.wantExit {
				t.Errorf("child exit: %v, want status %d", err, tc.wantExit)
			}
			// From here this process looks at (and a next run works in)
			// the child's temp dir.
			t.Setenv("TMPDIR", tmp)
			if tc.wantExit < 0 {
				// The next run, in the same temp dir, sweeps what the killed
				// one left: a table run (its scratch dir) on hosts (its
				// namespaces), its servers' dirs.
				var buf bytes.Buffer
				next := []string{"explore", "-impl", "redis-setnx-px", "-kinds", "net-partition-client", "-duration", "8s",
					"-seed", "1", "-shrink-time", "1s", "-out", t.TempDir()}
				if err := run(context.Background(), next, &buf, &buf); err != nil {
					t.Fatalf("next run: %v\n%s", err, buf.String())
				}
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("an interrupted run left result files: %v", entries)
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				t.Errorf("%s is left in the run's temp dir", e.Name())
			}
			for _, ns := range nss {
				if _, err := os.Stat("/run/netns/" + ns); !os.IsNotExist(err) {
					t.Errorf("namespace %s outlived the run (%v)", ns, err)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for _, p := range procs {
				for alive(p) && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				if alive(p) {
					t.Errorf("process %d (%s) outlived the run", p, comm(p))
				}
			}
		})
	}
}

// waitForLines reads r until each of the lines, in order, has begun a
// line, or a minute passed.
func waitForLines(r io.Reader, prefixes ...string) error {
	found := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		i := 0
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), prefixes[i]) {
				if i++; i == len(prefixes) {
					found <- nil
					return
				}
			}
		}
		found <- errors.New("exited before " + strconv.Quote(prefixes[i]))
	}()
	select {
	case err := <-found:
		return err
	case <-time.After(time.Minute):
		return errors.New("no " + strconv.Quote(prefixes[len(prefixes)-1]) + " within a minute")
	}
}

// namespacesOf lists the lab namespaces a process owns (their names carry
// its pid).
func namespacesOf(pid int) []string {
	var out []string
	for _, ns := range hosts.Leftovers() {
		if strings.HasPrefix(ns, hosts.Prefix+strconv.Itoa(pid)+"-") {
			out = append(out, ns)
		}
	}
	return out
}

// descendants lists every process below pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		me, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], me)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !slices.Contains(out, c) {
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// TestReplaceTable: published with tableFiles, a new table replaces the
// old one's files, and the counterexamples of rows it no longer has go
// with it; files that are no table's stay.
func TestReplaceTable(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(dir string, names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(dir), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(dst, "README.md", "explore.json", "old-seed1.schedule.json", "old-seed1.history.jsonl", "old-seed1.history.jsonl.gz", "old-seed1.html",
		"kept-seed1.schedule.json", "notes.txt")
	write(src, "README.md", "explore.json", "kept-seed1.schedule.json", "new-seed1.html")
	if _, err := report.Publish(src, dst, tableFiles); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if b, _ := os.ReadFile(filepath.Join(dst, e.Name())); e.Name() != "notes.txt" && string(b) != src {
			t.Errorf("%s is the old table's, not the new one's", e.Name())
		}
	}
	want := []string{"README.md", "explore.json", "kept-seed1.schedule.json", "new-seed1.html", "notes.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("after the new table, %v; want %v", got, want)
	}
}
