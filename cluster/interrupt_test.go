package cluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// interruptChildEnv makes the test binary a lab run that starts a Sentinel
// group with StopOnSignal's context, as cmd/bench's main does, for the
// parent to interrupt while the servers start.
const interruptChildEnv = "LOCKLAB_INTERRUPT_CHILD"

func init() {
	if os.Getenv(interruptChildEnv) == "" {
		return
	}
	ctx := StopOnSignal()
	decl := interruptChildDeclaration()
	if len(decl.Groups) == 0 {
		os.Stderr.WriteString("no Sentinel group to start\n")
		os.Exit(3)
	}
	topo, err := Start(ctx, decl, External{})
	if err == nil {
		topo.Close()
	}
	// As main: StopAll does not return once the signal arrived, and the
	// handler exits 130; a start that ended on its own exits 0.
	StopAll()
	os.Exit(0)
}

// interruptChildDeclaration is what the interrupted child starts: a
// Sentinel group, on hosts of their own where the lab can make them, so a
// cut start leaves namespaces to remove too (empty if the declaration
// fails).
func interruptChildDeclaration() topology.Declaration {
	decl, err := topology.RedisSentinel(topology.Need{Kind: topology.Redis})
	if err != nil {
		return topology.Declaration{}
	}
	decl.Hosts = hosts.Available() == nil
	return decl
}

// interruptedStarts are the moments a start is cut: once the run has made
// this many temp dirs, some servers run, one is being launched, the rest
// are not begun.
var interruptedStarts = []int{1, 3, 5}

// TestInterruptedStartLeavesNothing: a start whose context ends while its
// servers start (Ctrl-C cancels the run's context first), with or without
// the handler's StopAll beside it, returns having removed every temp dir it
// made, and no server it launched runs on.
func TestInterruptedStartLeavesNothing(t *testing.T) {
	sentinel, err := topology.RedisSentinel(topology.Need{Kind: topology.Redis})
	if err != nil {
		t.Fatal(err)
	}
	type test struct {
		name string
		decl topology.Declaration
		dirs int  // interrupt once the run has made this many dirs
		stop bool // and call StopAll then, as the signal's handler does
	}
	var tests []test
	for _, dirs := range interruptedStarts {
		for _, stop := range []bool{false, true} {
			name := "cancel"
			if stop {
				name = "cancel and StopAll"
			}
			tests = append(tests,
				test{name + " at dir " + strconv.Itoa(dirs) + " of five redis", topology.Of(topology.RedisNodes(5)), dirs, stop},
				test{name + " at dir " + strconv.Itoa(dirs) + " of a sentinel group", sentinel, dirs, stop})
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Container mode refuses a Sentinel group before it makes a
			// dir: there is no start to cut, and the kind says why.
			if err := StartsHere(tc.decl); err != nil {
				t.Skipf("%s cannot start here: %v", tc.name, err)
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			started, struck := make(chan struct{}), make(chan bool)
			go func() {
				for {
					select {
					case <-started:
						struck <- false
						return
					default:
					}
					if len(labEntries(t, tmp)) >= tc.dirs {
						cancel(ErrInterrupted)
						if tc.stop {
							StopAll()
						}
						struck <- true
						return
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()
			topo, err := Start(ctx, tc.decl, External{})
			close(started)
			if !<-struck {
				t.Fatalf("the start ended (%v) before its %d dirs existed: the test would prove nothing", err, tc.dirs)
			}
			if err == nil {
				// The last launch was through the gate before the cancel.
				topo.Close()
			} else {
				t.Logf("the start returned: %v", firstLine(err))
			}
			for _, e := range labEntries(t, tmp) {
				t.Errorf("%s is left in the run's temp dir", e)
			}
			for _, p := range processesNaming(tmp) {
				t.Errorf("a server outlived the start: %s", p)
			}
		})
	}
}

// TestCtrlCWhileServersStart: Ctrl-C while a lab run starts its servers
// exits 130 and leaves no temp dir and no server, wherever the start was.
func TestCtrlCWhileServersStart(t *testing.T) {
	// The child starts what interruptChildDeclaration says; where that
	// cannot start (container mode and a Sentinel group), it makes no dir
	// to interrupt, and the kind says why.
	if err := StartsHere(interruptChildDeclaration()); err != nil {
		t.Skipf("the child's Sentinel group cannot start here: %v", err)
	}
	for _, dirs := range interruptedStarts {
		t.Run("at dir "+strconv.Itoa(dirs), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), interruptChildEnv+"=1", "TMPDIR="+tmp)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			deadline := time.Now().Add(time.Minute)
			for len(labEntries(t, tmp)) < dirs {
				if time.Now().After(deadline) {
					t.Fatalf("the child made fewer than %d dirs in a minute", dirs)
				}
				time.Sleep(100 * time.Microsecond)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Errorf("child exit: %v, want status 130", err)
			}
			for _, e := range labEntries(t, tmp) {
				t.Errorf("%s is left in the run's temp dir", e)
			}
			for _, p := range processesNaming(tmp) {
				t.Errorf("a server outlived the run: %s", p)
			}
			if entries, err := os.ReadDir("/run/netns"); err == nil {
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), hosts.Prefix+strconv.Itoa(cmd.Process.Pid)+"-") {
						t.Errorf("namespace %s outlived the run", e.Name())
					}
				}
			}
		})
	}
}

// labEntries lists the names in tmp that start as the lab's temp dirs do.
func labEntries(t *testing.T, tmp string) []string {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "locklab-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// processesNaming lists the live processes whose command line names dir:
// every local server the lab starts is given a path in its node's dir.
func processesNaming(dir string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !running(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if line := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(line, dir) {
			out = append(out, strconv.Itoa(pid)+": "+line)
		}
	}
	return out
}

// firstLine is err's first line: a failed start appends the server's log.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// TestStopAllWaitsForALaunchInFlight: StopAll that comes while a server is
// being launched waits for the launch, refuses the process it would spawn,
// and then removes the node's dir; a launch of a node whose dir StopAll
// has removed is refused rather than make the dir again. Either way no dir
// and no process is left. This is the race that left a Sentinel group's
// dirs and servers behind a Ctrl-C during a matrix run side by side.
func TestStopAllWaitsForALaunchInFlight(t *testing.T) {
	tests := []struct {
		name string
		// stopFirst: StopAll runs before the start, not during its launch.
		stopFirst bool
	}{
		{"StopAll during the launch", false},
		{"a launch after StopAll removed the dir", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			dir, err := newNodeDir("fake-1")
			if err != nil {
				t.Fatal(err)
			}
			n := &Node{Name: "fake-1", Dir: dir, ready: func(context.Context, *Node) error { return nil }}
			inLaunch, release := make(chan struct{}), make(chan struct{})
			launch := func(ctx context.Context, n *Node) (*Process, error) {
				close(inLaunch)
				<-release
				// As a server's launch: its data dir, its log, its process.
				if err := os.MkdirAll(filepath.Join(n.Dir, "data"), 0o755); err != nil {
					return nil, err
				}
				return n.spawnLogged(exec.Command("sh", "-c", "sleep 60; true", n.Dir))
			}
			if tc.stopFirst {
				StopAll()
				close(release)
			}
			startErr := make(chan error, 1)
			go func() { startErr <- n.startProcess(context.Background(), launch, func(*Node) error { return nil }) }()
			stopped := make(chan struct{})
			if !tc.stopFirst {
				<-inLaunch
				go func() { StopAll(); close(stopped) }()
				select {
				case <-stopped:
					t.Fatal("StopAll returned while a launch was in flight")
				case <-time.After(100 * time.Millisecond):
				}
				close(release)
				<-stopped
			}
			err = <-startErr
			if err == nil {
				t.Fatal("the start succeeded: StopAll neither refused its process nor killed it")
			}
			t.Logf("the start returned: %v", firstLine(err))
			// Before any cleanup of the start's own (Node.Stop): StopAll
			// alone must have left nothing.
			for _, e := range labEntries(t, tmp) {
				t.Errorf("%s is left in the run's temp dir", e)
			}
			for _, p := range processesNaming(tmp) {
				t.Errorf("a process outlived StopAll: %s", p)
			}
		})
	}
}
