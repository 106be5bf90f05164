package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The SIGKILL test's child processes. They are chosen in init, before
// TestMain, so this file needs no hook in TestMain's own switch.
func init() {
	switch os.Getenv("LOCKLAB_CONTAINER_CHILD") {
	case "start":
		// Start a Redis container, print its address and container name,
		// wait to be SIGKILLed.
		n, err := StartRedis(context.Background(), RedisOptions{Name: "orphan"})
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString(n.Addr + " " + n.server.(*containerServer).name + "\n")
		select {}
	case "sweep":
		// A next run: connecting removes the leftovers of dead runs.
		if err := EngineAvailable(context.Background()); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// containerMode puts the test in container mode, or skips it, saying why,
// when no Docker engine answers.
func containerMode(t *testing.T) {
	t.Helper()
	t.Setenv(ServersEnv, ServersContainers)
	if err := EngineAvailable(context.Background()); err != nil {
		if errors.Is(err, ErrNoEngine) {
			t.Skipf("container mode needs a Docker engine: %v", err)
		}
		t.Fatal(err)
	}
}

// onThisMachine reports whether n listens where only this machine reaches
// it: on loopback, or, for a container published on the run's network's
// gateway (publishedOn), there.
func onThisMachine(n *Node) bool {
	a, err := netip.ParseAddrPort(n.Addr)
	if err != nil {
		return false
	}
	if a.Addr().IsLoopback() {
		return true
	}
	s, ok := n.server.(*containerServer)
	if !ok {
		return false
	}
	s.engine.mu.Lock()
	defer s.engine.mu.Unlock()
	return s.engine.gateway == a.Addr()
}

// ping answers nil when the server replies within d.
func ping(addr string, d time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: d, ReadTimeout: d, WriteTimeout: d})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Ping(ctx).Err()
}

// Every fault goes through the engine and does what it says: a paused or
// killed or disconnected server does not answer, a resumed or reconnected one
// does, a restart keeps the address and keeps the data or not as asked.
func TestContainerFaults(t *testing.T) {
	containerMode(t)
	ctx := context.Background()
	n, err := StartRedis(ctx, RedisOptions{Name: "faults", AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	if !strings.HasPrefix(n.Addr, "127.0.0.1:") {
		t.Fatalf("published on %s, want loopback only", n.Addr)
	}
	rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// A probe long enough to see an answer on a loaded machine, so a silent
	// server is silent for this whole bound, not just slow.
	const silent = 500 * time.Millisecond
	mustAnswer := func(step string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := ping(n.Addr, 2*time.Second)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no answer: %v", step, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	mustBeSilent := func(step string) {
		t.Helper()
		if err := ping(n.Addr, silent); err == nil {
			t.Fatalf("%s: the server still answers", step)
		}
	}
	get := func() string {
		v, err := rdb.Get(ctx, "k").Result()
		if errors.Is(err, redis.Nil) {
			return "(none)"
		}
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		return v
	}

	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	mustBeSilent("paused")
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	mustAnswer("resumed")

	// A Redis server crashes and restarts inside its running container:
	// its published port keeps accepting throughout, so no client dial is
	// refused (a refused dial is what sent go-redis clients into a
	// one-second dial back-off, and a kill that took the container with it
	// made server-restart come out safe). The nemesis's server kinds kill,
	// then restart, with or without the data.
	for _, keepData := range []bool{true, false} {
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		step := fmt.Sprintf("kill, restart keeping data %v", keepData)
		pid := n.PID()
		if err := noRefusedDials(n.Addr, func() error {
			if err := n.Kill(); err != nil {
				return err
			}
			mustBeSilent(step + ": killed")
			if pid == 0 || syscall.Kill(pid, 0) == nil {
				return fmt.Errorf("server pid %d still alive after the kill", pid)
			}
			return n.Restart(ctx, keepData)
		}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want := "v"
		if !keepData {
			want = "(none)"
		}
		if got := get(); got != want {
			t.Fatalf("%s: k = %q, want %s", step, got, want)
		}
		if err := noRefusedDials(n.Addr, func() error { return n.Restart(ctx, keepData) }); err != nil {
			t.Fatalf("restart of a running server keeping data %v: %v", keepData, err)
		}
	}

	if err := n.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	mustBeSilent("disconnected")
	if err := n.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	mustAnswer("reconnected")

	name := n.server.(*containerServer).name
	n.Stop()
	out, err := exec.Command("docker", "ps", "-a", "--filter", "name="+name, "--format", "{{.Names}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Fatalf("after Stop the engine still has container %s", s)
	}
}

// A lab SIGKILLed mid-run cannot clean up; the next run in container mode
// removes what it left.
func TestContainerLeftoversRemovedAfterSIGKILL(t *testing.T) {
	containerMode(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^$")
	child.Env = append(os.Environ(), "LOCKLAB_CONTAINER_CHILD=start")
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("child did not start its server: %v", err)
	}
	// Its own container by name: other runs on the same engine (other
	// work trees' tests) start orphans of their own at the same time.
	addr, name, _ := strings.Cut(strings.TrimSpace(line), " ")
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The orphan outlives its lab: nothing ran to remove it.
	if err := ping(addr, 2*time.Second); err != nil {
		t.Fatalf("the killed run's server at %s is already gone (%v): the test shows nothing", addr, err)
	}
	sweep := exec.Command(self, "-test.run=^$")
	sweep.Env = append(os.Environ(), "LOCKLAB_CONTAINER_CHILD=sweep")
	if out, err := sweep.CombinedOutput(); err != nil {
		t.Fatalf("next run: %v\n%s", err, out)
	}
	if err := ping(addr, time.Second); err == nil {
		t.Fatalf("the killed run's server at %s still answers after the next run started", addr)
	}
	names, err := exec.Command("docker", "ps", "-a", "--filter", "label=locklab=1", "--filter", "name=^/"+name+"$", "--format", "{{.Names}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(names)); s != "" {
		t.Fatalf("leftover containers: %s", s)
	}
	// No lab network of a dead owner may remain (this process's own, if
	// another test left a server running, is alive and stays).
	nets, err := exec.Command("docker", "network", "ls", "--filter", "label=locklab=1", "--format", `{{.Name}} {{.Label "locklab.owner"}}`).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(nets)), "\n") {
		name, owner, _ := strings.Cut(line, " ")
		if name != "" && ownerDead(map[string]string{labelOwner: owner}) {
			t.Errorf("leftover network %s of dead owner %s", name, owner)
		}
	}
}

// noRefusedDials runs f while dialling addr every 2ms, and fails if f
// fails or a dial was refused.
func noRefusedDials(addr string, f func() error) error {
	refused := make(chan error, 1)
	dialing, stopDial := context.WithCancel(context.Background())
	defer stopDial() // also when f fails the test
	go func() {
		defer close(refused)
		for dialing.Err() == nil {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if errors.Is(err, syscall.ECONNREFUSED) {
				refused <- err
				return
			}
			if err == nil {
				c.Close()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	err := f()
	stopDial()
	if err != nil {
		return err
	}
	if err := <-refused; err != nil {
		return fmt.Errorf("the published port refused a dial: %w", err)
	}
	return nil
}
