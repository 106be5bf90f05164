package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netfault"
	"github.com/locklab/locklab/topology"
)

// hostsVictim is what the victim run reports once everything is up.
type hostsVictim struct {
	PIDs       []int    // the server and the client process, both on hosts
	Namespaces []string // every namespace of its network
}

// runHostsChild is a lab run with hosts: a Redis on one host, a client
// process on another, a partition between them. It reports what it made and
// waits to be signalled.
func runHostsChild() {
	StopOnSignal()
	ctx := context.Background()
	fail := func(err error) {
		os.Stderr.WriteString(err.Error() + "\n")
		StopAll()
		os.Exit(1)
	}
	topo, err := Start(ctx, topology.Declaration{Groups: []topology.Group{topology.RedisNodes(1)}, Hosts: true}, External{})
	if err != nil {
		fail(err)
	}
	h, err := topo.Net.AddHost(ctx, "client")
	if err != nil {
		fail(err)
	}
	p, err := SpawnOn(h, exec.Command("sleep", "600"))
	if err != nil {
		fail(err)
	}
	if err := netfault.Partition(ctx, []*hosts.Host{h}, []*hosts.Host{topo.Lock(topology.Redis)[0].Host}); err != nil {
		fail(err)
	}
	json.NewEncoder(os.Stdout).Encode(hostsVictim{PIDs: []int{topo.Lock(topology.Redis)[0].PID(), p.PID()}, Namespaces: topo.Net.Namespaces()})
	select {}
}

// rootLinks lists the interfaces of the machine's own namespace.
func rootLinks(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			names = append(names, strings.TrimSuffix(f[1], ":"))
		}
	}
	slices.Sort(names)
	return names
}

// TestHostsOutliveNoRun: whether the lab ends on Ctrl-C or is SIGKILLed (and
// the next run starts), no namespace, veth, firewall rule, qdisc or process
// of its hosts remains. Rules, qdiscs and veths live only inside the
// namespaces, so a namespace gone takes them with it; the machine's own
// namespace never gets an interface at all.
func TestHostsOutliveNoRun(t *testing.T) {
	if err := hosts.Available(); err != nil {
		t.Skip(err)
	}
	cases := []struct {
		name     string
		sig      syscall.Signal
		wantExit int  // -1: killed, no exit status
		nextRun  bool // a new run must clean up after it
	}{
		{"SIGINT", syscall.SIGINT, 130, false},
		{"SIGTERM", syscall.SIGTERM, 143, false},
		{"SIGKILL then a new run", syscall.SIGKILL, -1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := rootLinks(t)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "LOCKLAB_CLUSTER_CHILD=hosts")
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(out).ReadBytes('\n')
			if err != nil {
				t.Fatalf("victim reported nothing: %v", err)
			}
			var v hostsVictim
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("victim said %q: %v", line, err)
			}
			for _, ns := range v.Namespaces {
				if _, err := os.Stat("/run/netns/" + ns); err != nil {
					t.Fatalf("victim's namespace %s missing while it runs: %v", ns, err)
				}
			}
			for _, pid := range v.PIDs {
				if !alive(pid) {
					t.Fatalf("victim's process %d not running", pid)
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			switch {
			case tc.wantExit < 0 && (!errors.As(err, &ee) || ee.ExitCode() != -1):
				t.Errorf("victim exit: %v, want killed", err)
			case tc.wantExit >= 0 && (!errors.As(err, &ee) || ee.ExitCode() != tc.wantExit):
				t.Errorf("victim exit: %v, want status %d", err, tc.wantExit)
			}
			if tc.nextRun {
				// A SIGKILLed run cannot remove its namespaces. They may be gone
				// already only because another lab run on this machine started
				// meanwhile and swept them (every start sweeps).
				for _, ns := range v.Namespaces {
					if _, err := os.Stat("/run/netns/" + ns); err != nil {
						t.Logf("%s was swept before this test's next run (another run started meanwhile): %v", ns, err)
					}
				}
				// What a SIGKILLed run leaves, the next run's start removes.
				n, err := hosts.New(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				n.Close()
			}
			deadline := time.Now().Add(5 * time.Second)
			for _, pid := range v.PIDs {
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if alive(pid) {
					t.Errorf("process %d outlived the run", pid)
				}
			}
			for _, ns := range v.Namespaces {
				if _, err := os.Stat("/run/netns/" + ns); !os.IsNotExist(err) {
					t.Errorf("namespace %s outlived the run (%v)", ns, err)
				}
			}
			if _, err := os.Stat("/run/locklab/" + strconv.Itoa(cmd.Process.Pid) + ".owner"); !os.IsNotExist(err) {
				t.Errorf("owner file of the run outlived it (%v)", err)
			}
			if after := rootLinks(t); !slices.Equal(before, after) {
				t.Errorf("the machine's own interfaces changed: %v, then %v", before, after)
			}
		})
	}
}

// TestHostsUnavailable: without the tools, Available names what is missing
// and New fails with the same reason, building nothing.
func TestHostsUnavailable(t *testing.T) {
	if os.Geteuid() != 0 {
		if err := hosts.Available(); err == nil || !strings.Contains(err.Error(), "root") {
			t.Errorf("Available() = %v as a user, want an error naming root", err)
		}
		return
	}
	t.Setenv("PATH", t.TempDir()) // no ip, iptables or tc
	before := hosts.Leftovers()
	err := hosts.Available()
	if err == nil || !strings.Contains(err.Error(), "iproute2") {
		t.Fatalf("Available() = %v, want an error naming iproute2", err)
	}
	if _, err2 := hosts.New(context.Background()); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("New() = %v, want %v", err2, err)
	}
	if after := hosts.Leftovers(); !slices.Equal(before, after) {
		t.Errorf("a failed New left namespaces: %v", after)
	}
}
