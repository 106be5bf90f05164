package cluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	switch os.Getenv("LOCKLAB_CLUSTER_CHILD") {
	case "1":
		runChild()
		return
	case "spinner":
		runSpinner()
		return
	case "hosts":
		runHostsChild()
		return
	}
	// Stops every server; a lab dir left behind fails the binary.
	os.Exit(EndOfTests(m.Run()))
}

// runChild starts a Redis, prints its pid and waits to be signalled: the
// parent test checks that SIGTERM takes the server down with it.
func runChild() {
	StopOnSignal()
	n, err := StartRedis(context.Background(), RedisOptions{})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	os.Stdout.WriteString(strconv.Itoa(n.PID()) + "\n")
	select {}
}

// runSpinner keeps every CPU busy with goroutines and counts, in a file,
// how often its goroutines get to run: a process whose count moves is not
// stopped.
func runSpinner() {
	var n atomic.Int64
	for i := 0; i < 4*runtime.GOMAXPROCS(0); i++ {
		go func() {
			for {
				n.Add(1)
				runtime.Gosched()
			}
		}()
	}
	f, err := os.Create(os.Getenv("LOCKLAB_SPINNER_FILE"))
	if err != nil {
		os.Exit(1)
	}
	for {
		f.WriteAt([]byte(strconv.FormatInt(n.Load(), 10)+"\n"), 0)
		time.Sleep(50 * time.Microsecond)
	}
}

// TestSignalStopReturnsOnlyOnceStopped: kill(SIGSTOP) returns before every
// thread of a busy process has stopped; Signal must not, or a worker told to
// go on right after its pause can still act before the pause takes hold.
func TestSignalStopReturnsOnlyOnceStopped(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/count"
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "LOCKLAB_CLUSTER_CHILD=spinner", "LOCKLAB_SPINNER_FILE="+file)
	p, err := Spawn(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	read := func() string { b, _ := os.ReadFile(file); return string(b) }
	for deadline := time.Now().Add(10 * time.Second); read() == ""; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("spinner never started")
		}
	}
	for round := 0; round < 20; round++ {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if !threadsStopped(p.PID()) {
			t.Fatalf("round %d: Signal(SIGSTOP) returned with threads still running", round)
		}
		before := read()
		time.Sleep(5 * time.Millisecond)
		if after := read(); after != before {
			t.Fatalf("round %d: a stopped process went on counting (%q -> %q)", round, before, after)
		}
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// alive: a zombie still answers kill(0), so ask /proc, as the package does.
func alive(pid int) bool { return pid > 0 && running(pid) }

func TestServersStartFaultAndStop(t *testing.T) {
	ctx := context.Background()
	topo, err := Start(ctx, topology.Of(topology.RedisNodes(2), topology.ReplicaOf("redis-1"), topology.ResourceNode(),
		topology.Single(topology.ZooKeeper), topology.Single(topology.Postgres)), External{})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, n := range topo.Nodes() {
		if !onThisMachine(n) {
			t.Errorf("%s listens on %s, want loopback (or its container's network's gateway)", n.Name, n.Addr)
		}
		pids = append(pids, n.PID())
	}
	if len(pids) != 6 {
		t.Fatalf("started %d nodes, want 6", len(pids))
	}

	// Replication is real: a write on the master shows up on the replica.
	master := redis.NewClient(&redis.Options{Addr: topo.Endpoints().Addrs(topology.Redis)[0]})
	defer master.Close()
	replica := redis.NewClient(&redis.Options{Addr: topo.Replica.Addr})
	defer replica.Close()
	if err := master.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for replica.Get(ctx, "k").Val() != "v" {
		if time.Now().After(deadline) {
			t.Fatal("write never reached the replica")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Pause: a paused server answers nothing until resumed.
	n := topo.Lock(topology.Redis)[1]
	c := redis.NewClient(&redis.Options{Addr: n.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Error("a SIGSTOPped server answered PING")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("resumed server: %v", err)
	}

	// Kill and restart without data: same address, empty.
	if err := c.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := n.PID()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if alive(old) {
		t.Error("SIGKILLed server still alive")
	}
	if err := n.Restart(ctx, false); err != nil {
		t.Fatal(err)
	}
	if n.PID() == old {
		t.Error("restart kept the old pid")
	}
	if got := c.Exists(ctx, "x").Val(); got != 0 {
		t.Errorf("after a restart without data the key exists (%d)", got)
	}
	pids = append(pids, n.PID())

	// PostgreSQL restart keeps its data when asked to.
	if err := topo.Lock(topology.Postgres)[0].Restart(ctx, true); err != nil {
		t.Fatal(err)
	}
	pids = append(pids, topo.Lock(topology.Postgres)[0].PID())

	topo.Close()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("server pid %d outlived Close", pid)
		}
	}
	if left := LivePIDs(); len(left) != 0 {
		t.Errorf("still tracked after Close: %v", left)
	}
}

// A run stopped by SIGTERM (or Ctrl-C) takes its servers down with it.
func TestSignalStopsServers(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKLAB_CLUSTER_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	k, _ := out.Read(buf)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:k])))
	if err != nil {
		t.Fatalf("child printed %q: %v", buf[:k], err)
	}
	if !alive(pid) {
		t.Fatalf("child's redis (pid %d) not running", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("child exit: %v, want status 143", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("redis pid %d outlived the SIGTERMed run", pid)
	}
}

func TestMissingBinaryNamesPackage(t *testing.T) {
	t.Setenv(ServersEnv, ServersLocal) // a missing binary is a local-mode error
	t.Setenv("PATH", t.TempDir())
	_, err := StartRedis(context.Background(), RedisOptions{})
	if !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Fatalf("got %v, want a missing-binary error naming redis-server", err)
	}
}
