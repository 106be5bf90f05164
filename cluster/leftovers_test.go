package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/topology"
)

// leftoversChildEnv makes the test binary a lab run that makes every kind
// of local leftover (a server's data dir, a run dir, hosts when root can
// make them), reports them, and then ends as the variable's value says.
const leftoversChildEnv = "LOCKLAB_LEFTOVERS_CHILD"

// leftoversVictim is what the child reports once everything is up.
type leftoversVictim struct {
	Dirs       []string
	Namespaces []string
	PIDs       []int
}

func init() {
	how := os.Getenv(leftoversChildEnv)
	if how == "" {
		return
	}
	// As cmd/bench's main: signals stop everything, and so does the end.
	StopOnSignal()
	ctx := context.Background()
	decl := topology.Of(topology.RedisNodes(1))
	decl.Hosts = hosts.Available() == nil
	topo, err := Start(ctx, decl, External{})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		StopAll()
		os.Exit(3)
	}
	run, err := leftovers.MakeDir("run") // as the engine makes a run's dir
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		StopAll()
		os.Exit(3)
	}
	v := leftoversVictim{Dirs: []string{topo.Lock(topology.Redis)[0].Dir, run}, PIDs: []int{topo.Lock(topology.Redis)[0].PID()}}
	if topo.Net != nil {
		v.Namespaces = topo.Net.Namespaces()
	}
	_ = json.NewEncoder(os.Stdout).Encode(v)
	switch how {
	case "exit":
		StopAll()
		os.Exit(0)
	case "fail":
		StopAll()
		os.Exit(1)
	}
	select {}
}

// TestNoLeftoversAfterAnyExit: however a lab run ends (normally, failing,
// Ctrl-C, SIGTERM, or SIGKILL followed by a new run), none of its temp
// dirs, namespaces or server processes remain, and its temp dir holds no
// locklab-* entry at all.
func TestNoLeftoversAfterAnyExit(t *testing.T) {
	tests := []struct {
		name     string
		how      string         // the child's env value
		sig      syscall.Signal // sent once the child reported; 0: none
		wantExit int            // -1: killed
	}{
		{"normal end", "exit", 0, 0},
		{"failure", "fail", 0, 1},
		{"Ctrl-C", "wait", syscall.SIGINT, 130},
		{"SIGTERM", "wait", syscall.SIGTERM, 143},
		{"SIGKILL then a new run", "wait", syscall.SIGKILL, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A temp dir of its own, where the child's and the new run's
			// dirs are all there is; readable by others, as /tmp is.
			tmp := t.TempDir()
			if err := os.Chmod(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), leftoversChildEnv+"="+tc.how, "TMPDIR="+tmp)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			line, err := bufio.NewReader(out).ReadBytes('\n')
			if err != nil {
				t.Fatalf("child reported nothing: %v", err)
			}
			var v leftoversVictim
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("child said %q: %v", line, err)
			}
			for _, d := range v.Dirs {
				if filepath.Dir(d) != tmp {
					t.Fatalf("child's dir %s is not in its temp dir %s: the test would prove nothing", d, tmp)
				}
			}
			if tc.sig != 0 {
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			switch {
			case tc.wantExit == 0 && err != nil:
				t.Errorf("child exit: %v, want status 0", err)
			case tc.wantExit != 0 && (!errors.As(err, &ee) || ee.ExitCode() != tc.wantExit):
				t.Errorf("child exit: %v, want status %d", err, tc.wantExit)
			}
			if tc.sig == syscall.SIGKILL {
				for _, d := range v.Dirs {
					if _, err := os.Stat(d); err != nil {
						t.Fatalf("the SIGKILLed run's dir %s is gone before any new run (%v): the test would prove nothing", d, err)
					}
				}
				// The next run, in the same temp dir, starts by sweeping.
				t.Setenv("TMPDIR", tmp)
				next, err := Start(context.Background(), topology.Declaration{}, External{})
				if err != nil {
					t.Fatal(err)
				}
				next.Close()
			}
			entries, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				t.Errorf("%s is left in the run's temp dir", e.Name())
			}
			for _, ns := range v.Namespaces {
				if _, err := os.Stat("/run/netns/" + ns); !os.IsNotExist(err) {
					t.Errorf("namespace %s outlived the run (%v)", ns, err)
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for _, pid := range v.PIDs {
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if alive(pid) {
					t.Errorf("server %d outlived the run", pid)
				}
			}
		})
	}
}
