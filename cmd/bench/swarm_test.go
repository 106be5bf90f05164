package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/leftovers"
)

// swarmPool is the address pool of the swarm the test makes: the last of
// the /16s Docker's default local pools hand the lab's container networks
// (172.17.0.0/16 onwards), never swarm's own default 10.0.0.0/8.
// The gateway bridge swarm makes for itself would take the next free /16
// of the default pools (172.18.0.0/16 here), so the test makes it first, on
// the pool's last /24, which the overlay networks drawn from the pool's
// first half never reach.
const (
	swarmPool      = "172.31.0.0/17"
	gatewaySubnet  = "172.31.255.0/24"
	gatewayNetwork = "docker_gwbridge"
)

// swarmOwnerLabel marks the node of a swarm this test made with its owner
// (package leftovers), so that a swarm left by a SIGKILLed test is left
// by the next one.
const swarmOwnerLabel = "locklab-owner"

// dockerCLI runs the docker command line and returns its output.
func dockerCLI(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// TestShardsOnSwarm runs two shards of a tiny matrix as a Docker swarm
// replicated job (each task a shard, its slot the index, deploy/shard.sh
// in the lab's Redis image, bench built from this tree) and asserts their
// merge is the matrix run unsharded here. The test makes its own swarm
// (the machine's engine must be in none) and leaves it on every exit path:
// the test's end or failure, SIGINT or SIGTERM, and, after a SIGKILL, the
// next run of the test, which leaves a swarm whose owner is dead.
func TestShardsOnSwarm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bench and runs a swarm job: run without -short")
	}
	needEngine(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skipf("needs the docker command line: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sweepSwarm(t, ctx)
	if state, err := dockerCLI(ctx, "info", "-f", "{{.Swarm.LocalNodeState}}"); err != nil {
		t.Fatal(err)
	} else if state != "inactive" {
		t.Skipf("the engine is in a swarm already (%s): this test makes and leaves its own, and will not leave another's", state)
	}
	_, gwErr := dockerCLI(ctx, "network", "inspect", gatewayNetwork)
	hadGateway := gwErr == nil

	image, err := cluster.ServerImage(ctx, "redis")
	if err != nil {
		t.Fatal(err)
	}
	commit, err := buildCommit()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bench")
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.labCommit="+commit, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	entry, err := filepath.Abs(filepath.Join("..", "..", "deploy", "shard.sh"))
	if err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o777); err != nil {
		t.Fatal(err)
	}

	// From here on the swarm exists: it is left however the test ends.
	var once sync.Once
	leave := func() {
		once.Do(func() {
			c, stop := context.WithTimeout(context.Background(), time.Minute)
			defer stop()
			_, _ = dockerCLI(c, "swarm", "leave", "--force")
			if !hadGateway {
				// swarm leave keeps the gateway bridge it made.
				_, _ = dockerCLI(c, "network", "rm", gatewayNetwork)
			}
		})
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			leave()
			cluster.StopAll()
			os.RemoveAll(dir) // the test's cleanup does not run past os.Exit
			fmt.Fprintf(os.Stderr, "%v: left the test's swarm\n", s)
			os.Exit(1)
		case <-done:
		}
	}()
	t.Cleanup(func() {
		signal.Stop(sig)
		close(done)
		leave()
		c, stop := context.WithTimeout(context.Background(), time.Minute)
		defer stop()
		if state, err := dockerCLI(c, "info", "-f", "{{.Swarm.LocalNodeState}}"); err != nil || state != "inactive" {
			t.Errorf("after the test the engine's swarm is %q (%v)", state, err)
		}
		if !hadGateway {
			if _, err := dockerCLI(c, "network", "inspect", gatewayNetwork); err == nil {
				t.Errorf("after the test docker_gwbridge remains")
			}
		}
	})
	if !hadGateway {
		// Docker's documented way to choose the gateway bridge's subnet:
		// make the network, with the options swarm gives its own, before
		// the swarm.
		if _, err := dockerCLI(ctx, "network", "create", "--subnet", gatewaySubnet,
			"--opt", "com.docker.network.bridge.name="+gatewayNetwork,
			"--opt", "com.docker.network.bridge.enable_icc=false",
			"--opt", "com.docker.network.bridge.enable_ip_masquerade=true",
			gatewayNetwork); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dockerCLI(ctx, "swarm", "init", "--advertise-addr", "127.0.0.1",
		"--default-addr-pool", swarmPool, "--default-addr-pool-mask-length", "24"); err != nil {
		t.Fatal(err)
	}
	self, err := leftovers.Self()
	if err != nil {
		t.Fatal(err)
	}
	node, err := dockerCLI(ctx, "info", "-f", "{{.Swarm.NodeID}}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dockerCLI(ctx, "node", "update", "--label-add", swarmOwnerLabel+"="+self.String(), node); err != nil {
		t.Fatal(err)
	}

	args := []string{"matrix", "-impl", "none,local-mutex", "-scenario", "contention", "-runs", "1", "-seed", "13"}
	service := fmt.Sprintf("locklab-shards-%d", os.Getpid())
	create := []string{"service", "create", "--detach", "--name", service,
		"--mode", "replicated-job", "--replicas", "2", "--max-concurrent", "2", "--restart-condition", "none",
		"--env", "SLOT={{.Task.Slot}}", "--env", "LOCKLAB_SHARDS=2", "--env", "LOCKLAB_SHARD_OUT=/out",
		"--mount", "type=bind,source=" + bin + ",target=/usr/local/bin/bench,readonly",
		"--mount", "type=bind,source=" + entry + ",target=/usr/local/bin/locklab-shard,readonly",
		"--mount", "type=bind,source=" + parts + ",target=/out",
		"--entrypoint", "/usr/local/bin/locklab-shard", image}
	if _, err := dockerCLI(ctx, append(create, args...)...); err != nil {
		t.Fatal(err)
	}
	states := waitJob(t, ctx, service)
	t.Logf("swarm tasks: %s", states)

	merged, whole := filepath.Join(dir, "merged"), filepath.Join(dir, "whole")
	benchRun(t, "merge", "-out", merged, parts)
	benchRun(t, append(args, "-out", whole)...)
	sameMatrix(t, whole, merged)
}

// waitJob waits until every task of the replicated job has completed, and
// fails the test with the job's logs when one did not.
func waitJob(t *testing.T, ctx context.Context, service string) string {
	t.Helper()
	for {
		out, err := dockerCLI(ctx, "service", "ps", "--format", "{{.Name}} {{.CurrentState}} {{.Error}}", service)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		complete, failed := 0, false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			switch f[1] {
			case "Complete":
				complete++
			case "Failed", "Rejected", "Shutdown", "Orphaned":
				failed = true
			}
		}
		if failed {
			logs, _ := dockerCLI(context.Background(), "service", "logs", "--raw", service)
			t.Fatalf("a shard's task failed:\n%s\nlogs:\n%s", out, logs)
		}
		if complete == 2 {
			return strings.ReplaceAll(out, "\n", "; ")
		}
		select {
		case <-ctx.Done():
			logs, _ := dockerCLI(context.Background(), "service", "logs", "--raw", service)
			t.Fatalf("the job did not complete: %v\n%s\nlogs:\n%s", ctx.Err(), out, logs)
		case <-time.After(time.Second):
		}
	}
}

// sweepSwarm leaves a swarm an earlier run of this test made and could
// not leave (it was SIGKILLed): one whose node bears the owner label of a
// dead process. A swarm of anyone else's is never touched.
func sweepSwarm(t *testing.T, ctx context.Context) {
	t.Helper()
	state, err := dockerCLI(ctx, "info", "-f", "{{.Swarm.LocalNodeState}}")
	if err != nil || state != "active" {
		return
	}
	label, err := dockerCLI(ctx, "node", "inspect", "self", "-f", "{{index .Spec.Labels \""+swarmOwnerLabel+"\"}}")
	if err != nil || label == "" || label == "<no value>" {
		return
	}
	owner, err := leftovers.ParseOwner(label)
	if err != nil || owner.Alive() {
		return
	}
	t.Logf("leaving the swarm of a dead run of this test (owner %s)", label)
	if _, err := dockerCLI(ctx, "swarm", "leave", "--force"); err != nil {
		t.Fatal(err)
	}
	_, _ = dockerCLI(ctx, "network", "rm", gatewayNetwork)
}
