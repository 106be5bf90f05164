package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/locklab/locklab/cluster/leftovers"
)

// The lab's connection to the Docker engine in container mode: one per
// process, its run id and owner labels, the run's network, and StopAll's
// removal of every container and network of the run.

// engine is the lab's connection to the Docker engine, one per process.
type engine struct {
	cli   *testcontainers.DockerClient
	run   string
	owner string

	mu         sync.Mutex
	network    string     // the run's network name, "" until the first container
	gateway    netip.Addr // this machine's address on it
	containers map[*containerServer]struct{}
	images     map[string]string // base image + "\x00" + server -> built tag
}

var (
	engineMu  sync.Mutex
	theEngine *engine
)

// connectEngine returns the process's engine, connecting (and removing the
// leftovers of dead runs) the first time.
func connectEngine(ctx context.Context) (*engine, error) {
	engineMu.Lock()
	defer engineMu.Unlock()
	if theEngine != nil {
		return theEngine, nil
	}
	cli, err := newDockerClient(ctx)
	if err != nil {
		return nil, noEngine(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, noEngine(err)
	}
	self, err := leftovers.Self()
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("container mode: %w", err)
	}
	e := &engine{cli: cli, run: newRunID(), owner: self.String(), containers: map[*containerServer]struct{}{}, images: map[string]string{}}
	if err := e.removeLeftovers(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	theEngine = e
	return e, nil
}

// noEngine is the one error container mode gives without an engine.
// testcontainers tries DOCKER_HOST, its properties file, the default socket
// and rootless Docker in turn; err is the last one's reason.
func noEngine(err error) error {
	return fmt.Errorf("container mode (%s=%s): %w at DOCKER_HOST, /var/run/docker.sock or a rootless socket (last: %v); start one (on Debian as root, `make setup` starts dockerd) or use %s=%s",
		ServersEnv, ServersContainers, ErrNoEngine, err, ServersEnv, ServersLocal)
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (e *engine) labels() map[string]string {
	return map[string]string{labelLab: "1", labelRun: e.run, labelOwner: e.owner}
}

// ensureNetwork creates the run's network the first time a container needs
// it (servers reach each other there by container name: a replica its
// master), and learns this machine's address on it (its gateway).
func (e *engine) ensureNetwork(ctx context.Context) (string, error) {
	if e.network != "" {
		return e.network, nil
	}
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(e.labels()))
	if err != nil {
		return "", fmt.Errorf("container mode: create network: %w", err)
	}
	r, err := e.cli.NetworkInspect(ctx, nw.ID, client.NetworkInspectOptions{})
	if err != nil {
		_, _ = e.cli.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{})
		return "", fmt.Errorf("container mode: inspect network %s: %w", nw.Name, err)
	}
	e.gateway = netip.Addr{}
	for _, c := range r.Network.IPAM.Config {
		if c.Gateway.Is4() {
			e.gateway = c.Gateway
			break
		}
	}
	e.network = nw.Name
	return e.network, nil
}

// forget untracks a removed container; the network goes with the last one.
func (e *engine) forget(ctx context.Context, s *containerServer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.containers, s)
	if len(e.containers) == 0 && e.network != "" {
		_, _ = e.cli.NetworkRemove(ctx, e.network, client.NetworkRemoveOptions{})
		e.network = ""
	}
}

// removeAll removes every container and network of this run: StopAll's part
// for container mode. It asks the engine by label, so a container whose
// start was interrupted half-way is found too.
func (e *engine) removeAll(ctx context.Context) {
	f := client.Filters{}.Add("label", labelRun+"="+e.run)
	if cs, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			_, _ = e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		}
	}
	if ns, err := e.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			_, _ = e.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		}
	}
	e.mu.Lock()
	e.containers = map[*containerServer]struct{}{}
	e.network = ""
	e.mu.Unlock()
}

// removeContainers is StopAll's hook: a no-op unless container mode connected.
func removeContainers() {
	engineMu.Lock()
	e := theEngine
	engineMu.Unlock()
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e.removeAll(ctx)
}

// EngineAvailable reports why container mode cannot run here (nil when a
// Docker engine answers), for tests that skip without one.
func EngineAvailable(ctx context.Context) error {
	_, err := connectEngine(ctx)
	return err
}

// LabResources lists the containers and networks this process made, as
// "kind name" lines: once its topologies are closed there should be none.
func LabResources(ctx context.Context) ([]string, error) {
	e, err := connectEngine(ctx)
	if err != nil {
		return nil, err
	}
	f := client.Filters{}.Add("label", labelLab+"=1").Add("label", labelOwner+"="+e.owner)
	var out []string
	cs, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs.Items {
		out = append(out, "container "+strings.Join(c.Names, ","))
	}
	ns, err := e.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	return out, nil
}

// newDockerClient is testcontainers' client to the machine's engine, set up
// as the lab needs it.
func newDockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	// The reaper pulls testcontainers/ryuk from Docker Hub; the lab cleans up itself.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	// Its banner and per-container lines would bury the lab's own output;
	// failures reach the lab as errors.
	tclog.SetDefault(tclog.NewNoopLogger())
	return testcontainers.NewDockerClientWithOpts(ctx)
}
