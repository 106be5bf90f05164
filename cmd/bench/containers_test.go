package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// Fault scenarios re-execute this binary as their client workers; a test
// binary must answer as the bench binary would. Servers of a failed test go
// with the run.
func TestMain(m *testing.M) {
	runner.MaybeRunWorker()
	// Stops every server; a lab dir left behind fails the binary.
	code := cluster.EndOfTests(m.Run())
	// Whatever the tests did in container mode, the engine keeps nothing of
	// this run: no container, no network.
	if cluster.EngineAvailable(context.Background()) == nil {
		left, err := cluster.LabResources(context.Background())
		if err != nil {
			fmt.Fprintf(os.Stderr, "list the lab's containers and networks: %v\n", err)
			code = 1
		} else if len(left) > 0 {
			fmt.Fprintf(os.Stderr, "after the tests the engine still has: %v\n", left)
			code = 1
		}
	}
	os.Exit(code)
}

// needEngine skips, saying why, when no Docker engine answers.
func needEngine(t *testing.T) {
	t.Helper()
	if err := cluster.EngineAvailable(context.Background()); err != nil {
		if errors.Is(err, cluster.ErrNoEngine) {
			t.Skipf("needs a Docker engine: %v", err)
		}
		t.Fatal(err)
	}
}

// checkVerdict runs `bench check` with args and returns its verdict line.
func checkVerdict(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	args = append([]string{"check", "-out", t.TempDir()}, args...)
	if err := run(context.Background(), args, &out, &out); err != nil {
		t.Fatalf("bench %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "verdict: ") {
		t.Fatalf("no verdict line:\n%s", out.String())
	}
	return strings.TrimPrefix(last, "verdict: ")
}

// In container mode every server fault means what it means in local mode,
// so every cell reaches the verdict the reviewed table
// (scenarios/expectations.md) gives it: one cell per way a fault reaches a
// server in container mode, plus the no-fault contention of each server
// kind. A fault that did not land shows as a verdict other than the
// table's (server-restart came out safe in container mode, unseen, while
// Kill replaced the whole container: issue 21). The lease is the matrix's
// (1s), whose hand-off waits are the tightest. A topology's declared server
// settings reach the container too: the two with session timeouts lose a
// paused holder's lock, as in local mode. Nothing of the run stays behind
// in the engine.
func TestContainerModeVerdicts(t *testing.T) {
	t.Setenv(cluster.ServersEnv, cluster.ServersContainers)
	needEngine(t)
	tests := []struct {
		impl, scenario string
		fencing        bool
		fault          string // what reaches the server, for the reader
		topology       string // "" is the single one
	}{
		{"redis-setnx-px", "contention", false, "none", ""},
		{"zookeeper", "contention", false, "none", ""},
		{"pg-advisory", "contention", false, "none", ""},
		{"mysql-get-lock", "pause-past-ttl", false, "none on the server: its declared wait_timeout ends the paused holder's session", "mysql-wait-timeout"},
		{"pg-advisory", "pause-past-ttl", false, "none on the server: its declared idle_session_timeout ends the paused holder's session", "pg-idle-timeouts"},
		{"pg-advisory", "holder-session-ended", false, "server-ends-session: the holder's backend terminated, found by the client's own address and port", ""},
		{"mysql-get-lock", "holder-session-ended", false, "server-ends-session: the holder's session killed, found by the client's own address and port", ""},
		{"etcd-lock", "holder-crash", false, "none on the servers: three etcd containers, the holder SIGKILLed", "etcd-cluster"},
		{"redis-setnx-px", "server-restart", false, "server-restart-empty: the server killed in its container, started empty", ""},
		{"redis-setnx-px", "server-restart", true, "server-restart-empty, and the fence counter lost with it", ""},
		{"peer-redsync", "server-restart", false, "server-restart-empty, under a peer's go-redis client", ""},
		{"redlock", "redlock-restart", false, "a running server restarted empty in place", ""},
		{"redlock", "redlock-restart-delayed", false, "a server killed, held down past the TTL, started empty", ""},
		{"redlock", "redlock-clock-jump", false, "server-clock-jump: the clock shim mounted into the container", ""},
		{"redis-setnx-px", "redis-failover", false, "server-pause of the replica (docker pause), kill of the master", ""},
	}
	for _, tt := range tests {
		name := tt.impl + "/" + tt.scenario
		if tt.fencing {
			name += "/fenced"
		}
		topo := tt.topology
		if topo == "" {
			topo = topology.SingleName
		} else {
			name = topo + "/" + name
		}
		t.Run(name, func(t *testing.T) {
			want, err := scenarios.Expected(tt.impl, topo, tt.scenario, tt.fencing)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"-servers", "containers", "-topology", topo, "-impl", tt.impl, "-scenario", tt.scenario, "-sections", "500", "-ttl", "1s"}
			if tt.fencing {
				args = append(args, "-fencing")
			}
			// A run whose fault never put the lock at risk proves nothing
			// either way (a container restarted slowly on a loaded
			// machine let the holder write alone past its hold-up): it is
			// run again, as the matrix runs a cell until enough runs
			// exercised it; an exercised run's verdict is never retried.
			got := checkVerdict(t, args...)
			for try := 1; got == string(checker.NotExercised) && want.Verdict != checker.NotExercised && try < 3; try++ {
				t.Logf("run %d was not exercised; running it again", try)
				got = checkVerdict(t, args...)
			}
			if got != string(want.Verdict) {
				t.Fatalf("fault %s: verdict %s, the table's %s (%s)", tt.fault, got, want.Verdict, want.Why)
			}
			noLabResources(t)
		})
	}
}

// A server fault kind with no cell of its own in the table reaches the
// same verdict on both backends: server-kill (restart with the data dir
// kept) at the server-restart scenario's moment. The lab's Redis keeps
// nothing on disk, so on both it comes back empty and the holder's lock is
// lost.
func TestContainerModeServerKillAsLocal(t *testing.T) {
	t.Setenv(cluster.ServersEnv, cluster.ServersContainers)
	needEngine(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skipf("the local side needs redis-server (make setup installs it outside container mode): %v", err)
	}
	s := nemesis.Fixed["server-restart"]("redis-setnx-px", false, time.Second, checker.Bound(time.Second))
	s.Name, s.Faults[0].Kind = "server-kill", nemesis.ServerKill
	path := filepath.Join(t.TempDir(), "server-kill.schedule.json")
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, mode := range []string{cluster.ServersLocal, cluster.ServersContainers} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(cluster.ServersEnv, mode)
			verdicts[mode] = checkVerdict(t, "-schedule", path)
		})
	}
	local, containers := verdicts[cluster.ServersLocal], verdicts[cluster.ServersContainers]
	if local == "" || containers == "" {
		t.Fatalf("verdicts %v: a run failed", verdicts)
	}
	if local != containers {
		t.Fatalf("server-kill: verdict %s in container mode, %s in local mode", containers, local)
	}
	noLabResources(t)
}

// noLabResources fails the test if the engine still has a container or
// network of this process.
func noLabResources(t *testing.T) {
	t.Helper()
	left, err := cluster.LabResources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("after the run the engine still has: %v", left)
	}
}

// composeTools are the two ways to run docker-compose.yml: Debian's
// docker-compose (1.x, Python; Compose v2 where it is the Go binary) and the
// docker CLI's compose plugin (Compose v2).
var composeTools = []struct {
	name, test string
	cmd        []string
}{
	{"docker-compose", "standalone", []string{"docker-compose"}},
	{"docker compose", "plugin", []string{"docker", "compose"}},
}

// docker-compose.yml is real: brought up under a project name of its own,
// with the variables its header gives the lab runs the no-fault scenario and
// a short benchmark against it; brought down, it leaves nothing behind. It
// runs with every compose tool the machine has, and says which it used and
// which it did not find.
func TestComposeFile(t *testing.T) {
	needEngine(t)
	found := 0
	for _, tool := range composeTools {
		version, err := exec.Command(tool.cmd[0], append(tool.cmd[1:], "version")...).CombinedOutput()
		if err != nil {
			t.Logf("%s: not on this machine (%v), not tested", tool.name, err)
			continue
		}
		found++
		t.Run(tool.test, func(t *testing.T) {
			t.Logf("compose tool: %s, %s", tool.name, firstLine(version))
			testComposeFile(t, tool.test, tool.cmd)
		})
	}
	if found == 0 {
		t.Skip("needs docker-compose or the docker compose plugin (make setup installs docker-compose)")
	}
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

func testComposeFile(t *testing.T, name string, cmd []string) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	project := "locklab-test-compose-" + name + "-" + strconv.Itoa(os.Getpid())
	dc := func(args ...string) *exec.Cmd {
		full := append(append(append([]string{}, cmd[1:]...), "-f", filepath.Join(root, "docker-compose.yml"), "-p", project), args...)
		c := exec.Command(cmd[0], full...)
		c.Dir = root
		return c
	}
	down := func() {
		if out, err := dc("down", "-v", "--remove-orphans").CombinedOutput(); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	}
	t.Cleanup(down)
	if out, err := dc("up", "-d", "--build").CombinedOutput(); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
	// The header's variables, read from the file itself so they cannot drift.
	header, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	vars := 0
	for _, line := range strings.Split(string(header), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if !strings.HasPrefix(line, "export LOCKLAB_") {
			continue
		}
		k, v, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		t.Setenv(k, strings.Trim(v, "'"))
		vars++
	}
	if vars != 4 {
		t.Fatalf("the compose header gives %d LOCKLAB_ variables, want 4", vars)
	}
	t.Setenv(cluster.ServersEnv, "")

	for _, impl := range []string{"redis-setnx-px", "redlock", "zookeeper", "pg-advisory"} {
		t.Run(impl, func(t *testing.T) {
			if got := checkVerdict(t, "-impl", impl, "-scenario", "contention", "-sections", "500"); got != "safe" {
				t.Fatalf("verdict %s, want safe", got)
			}
		})
	}
	t.Run("bench", func(t *testing.T) {
		out := t.TempDir()
		var log bytes.Buffer
		args := []string{"bench", "-quick", "-impl", "redis-setnx-px,zookeeper", "-workload", "uncontended,contended", "-trials", "1", "-out", out}
		if err := run(context.Background(), args, &log, &log); err != nil {
			t.Fatalf("bench: %v\n%s", err, log.String())
		}
		md, err := os.ReadFile(filepath.Join(out, "bench.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"redis-setnx-px", "zookeeper"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("bench.md has no row for %s", want)
			}
		}
	})

	down()
	for _, args := range [][]string{
		{"ps", "-a", "--filter", "label=com.docker.compose.project=" + project, "--format", "{{.Names}}"},
		{"network", "ls", "--filter", "label=com.docker.compose.project=" + project, "--format", "{{.Name}}"},
	} {
		out, err := exec.Command("docker", args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			t.Fatalf("after compose down, docker %s shows: %s", args[0], s)
		}
	}
}

// A server mode the lab does not know is a usage error naming the valid
// ones, whether it comes as a flag or from the environment, and writes nothing.
func TestServersBadInput(t *testing.T) {
	tests := []struct {
		name string
		env  string
		args []string
	}{
		{"flag", "", []string{"check", "-servers", "vm", "-impl", "none", "-scenario", "contention"}},
		{"env", "vm", []string{"check", "-impl", "none", "-scenario", "contention"}},
		{"env on list", "vm", []string{"list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cluster.ServersEnv, tt.env)
			dir := t.TempDir()
			args := tt.args
			if args[0] == "check" {
				args = append([]string{"check", "-out", dir}, args[1:]...)
			}
			var out bytes.Buffer
			err := run(context.Background(), args, &out, &out)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "want local or containers") {
				t.Fatalf("got %v, want a usage error naming local and containers", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("bad input wrote files: %v", entries)
			}
		})
	}
}
