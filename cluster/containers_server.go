package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/locklab/locklab/faults/clockjump"
)

// One server as a container: its creation, the faults the engine (or the
// image's supervisor) carries out, its log.

// containerServer runs a node's server as a container of the Docker
// engine: the node's backend in container mode.
type containerServer struct {
	node   *Node
	engine *engine
	server string // image: docker/<server>
	port   string // the server's port inside the container, e.g. "6379/tcp"
	env    map[string]string
	cmd    []string   // overrides the image's CMD when set
	name   string     // container name, unique per run; peers resolve it
	alias  string     // a second name peers resolve, fixed before the start (an ensemble's lines)
	host   int        // published port, kept across restarts
	hostIP netip.Addr // the address it is published on (publishedOn)
	binds  []string   // host dirs mounted at the same path (the clock shim's)
	// supervised: the image's PID 1 crashes the server inside the running
	// container on SIGHUP and starts it again on SIGUSR1 (data kept) or
	// SIGUSR2 (data dir emptied); see docker/redis/supervise.sh.
	supervised bool
	// command is the supervised server's process name (as ps shows it), so
	// the supervisor's other children are not taken for the server.
	command string

	mu sync.Mutex
	id string // current container, "" when removed
}

// containerSpec says how to run one server as a container.
type containerSpec struct {
	kind   Kind
	name   string // node name
	server string // docker/<server>
	port   int
	env    map[string]string
	cmd    []string
	alias  string // a network alias the other members know before the start
	ready  func(ctx context.Context, n *Node) error
	// supervised: the image crashes and restarts its server in place on a
	// signal; command is the server's process name.
	supervised bool
	command    string
	// clockShift preloads the clockshift shim (faults/clockjump), built on
	// this machine and mounted into the container with the node's dir,
	// where the offset file is: the engine must share this machine's file
	// system, as a local engine does.
	clockShift bool
}

var containerSeq struct {
	sync.Mutex
	n int
}

// startContainer starts spec's server as a container and waits until it
// answers requests.
func startContainer(ctx context.Context, spec containerSpec) (*Node, error) {
	e, err := connectEngine(ctx)
	if err != nil {
		return nil, err
	}
	img, err := e.image(ctx, spec.server)
	if err != nil {
		return nil, err
	}
	hostPort, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := newNodeDir(spec.name)
	if err != nil {
		return nil, err
	}
	containerSeq.Lock()
	containerSeq.n++
	seq := containerSeq.n
	containerSeq.Unlock()
	s := &containerServer{
		engine: e, server: img, port: strconv.Itoa(spec.port) + "/tcp", env: spec.env, cmd: spec.cmd,
		name: fmt.Sprintf("locklab-%s-%s-%d", e.run, spec.name, seq), host: hostPort,
		supervised: spec.supervised, command: spec.command, alias: spec.alias,
	}
	n := &Node{Kind: spec.kind, Name: spec.name, Dir: dir, ready: spec.ready, server: s}
	s.node = n
	if s.hostIP, err = s.publishedOn(ctx, spec.kind); err != nil {
		n.Stop()
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	n.Addr = net.JoinHostPort(s.hostIP.String(), strconv.Itoa(hostPort))
	if spec.clockShift {
		if err := s.preloadClockShift(n); err != nil {
			n.Stop()
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	if err := s.create(ctx); err != nil {
		n.Stop()
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	if err := s.waitReady(ctx); err != nil {
		err = fmt.Errorf("%s did not become ready: %w\n--- last lines of its log ---\n%s", n.Name, err, n.LogTail(20))
		n.Stop()
		return nil, err
	}
	return n, nil
}

// publishedOn is the address the server's port is published on. It is
// loopback, except for a kind whose sessions the lab ends (SessionEnder):
// that one is published on this machine's address on the run's network
// (its gateway). A connection from this machine to a port published on
// loopback is accepted by the engine's proxy (docker-proxy), which opens
// a connection of its own to the server, so the server sees every client
// as the gateway on a port of the proxy's and cannot be told which session
// is whose: EndSessions, which finds a client's sessions by the client's
// own address and port, ended none. To the gateway's address the kernel
// forwards the connection itself (the engine's DNAT rule), and the server
// sees the client's own address and port. The container is counted in the
// run from here, so the network, and with it the address, stays while it
// does.
func (s *containerServer) publishedOn(ctx context.Context, kind Kind) (netip.Addr, error) {
	loopback := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	k, err := KindOf(kind)
	if err != nil {
		return netip.Addr{}, err
	}
	if _, ok := k.(SessionEnder); !ok {
		return loopback, nil
	}
	e := s.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.ensureNetwork(ctx); err != nil {
		return netip.Addr{}, err
	}
	e.containers[s] = struct{}{}
	if !e.gateway.IsValid() {
		return netip.Addr{}, fmt.Errorf("the run's network %s has no IPv4 gateway to publish the server's port on", e.network)
	}
	return e.gateway, nil
}

// preloadClockShift sets the container's environment to preload the shim
// and mounts what it reads, at the same paths, so JumpClock works unchanged.
func (s *containerServer) preloadClockShift(n *Node) error {
	n.clockFile = filepath.Join(n.Dir, "clock-offset")
	env, err := clockjump.Env(n.clockFile)
	if err != nil {
		return err
	}
	lib, err := clockjump.Library()
	if err != nil {
		return err
	}
	merged := map[string]string{}
	for k, v := range s.env {
		merged[k] = v
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		merged[k] = v
	}
	s.env = merged
	// The dir, not the file: Set replaces the file by a rename, which a
	// mount of the file itself would not show.
	s.binds = append(s.binds, n.Dir+":"+n.Dir, filepath.Dir(lib)+":"+filepath.Dir(lib)+":ro")
	return nil
}

// create makes and starts a new container from the image, publishing the
// server's port on its address only (publishedOn).
func (s *containerServer) create(ctx context.Context) error {
	e := s.engine
	e.mu.Lock()
	nw, err := e.ensureNetwork(ctx)
	if err == nil {
		e.containers[s] = struct{}{}
	}
	e.mu.Unlock()
	if err != nil {
		return err
	}
	req := testcontainers.ContainerRequest{
		Image:          s.server,
		Name:           s.name,
		Env:            s.env,
		Cmd:            s.cmd,
		Labels:         e.labels(),
		ExposedPorts:   []string{s.port},
		Networks:       []string{nw},
		NetworkAliases: map[string][]string{nw: s.aliases()},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.PortBindings = portBindings(s.port, s.hostIP, s.host)
			hc.Binds = append(hc.Binds, s.binds...)
		},
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if c != nil {
		s.mu.Lock()
		s.id = c.GetContainerID()
		s.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("start container from %s: %w", s.server, err)
	}
	return nil
}

// aliases are the names the container answers to on the run's network.
func (s *containerServer) aliases() []string {
	if s.alias == "" {
		return []string{s.name}
	}
	return []string{s.name, s.alias}
}

func (s *containerServer) current() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		return "", fmt.Errorf("container %s was removed", s.name)
	}
	return s.id, nil
}

// running reports whether the container's main process runs (paused counts).
func (s *containerServer) running(ctx context.Context) (bool, error) {
	running, _, err := s.state(ctx)
	return running, err
}

// state reports whether the container's main process runs (paused counts)
// and whether the container is paused.
func (s *containerServer) state(ctx context.Context) (running, paused bool, err error) {
	id, err := s.current()
	if err != nil {
		return false, false, err
	}
	r, err := s.engine.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return false, false, fmt.Errorf("inspect %s: %w", s.name, err)
	}
	if r.Container.State == nil {
		return false, false, nil
	}
	return r.Container.State.Running, r.Container.State.Paused, nil
}

// inPlace reports whether the container's supervisor can crash and start
// its server now: a supervised container that runs and is not frozen (a
// paused supervisor would act only once resumed).
func (s *containerServer) inPlace(ctx context.Context) bool {
	if !s.supervised {
		return false
	}
	running, paused, err := s.state(ctx)
	return err == nil && running && !paused
}

func (s *containerServer) waitReady(ctx context.Context) error {
	n := s.node
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var last error
	for {
		if ok, err := s.running(ctx); err != nil {
			return err
		} else if !ok {
			return errors.New("container exited")
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		last = n.ready(rctx, n)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last probe: %v)", ctx.Err(), last)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// kill crashes the server with SIGKILL. In a supervised container only the
// server dies and stays down until restart, as a local server's process
// does: the container, its network and its published port stay, so the
// restart costs what the server's own start costs, as in local mode. Killing
// the whole container instead (as before) made the nemesis's server-restart
// (kill, then restart) replace the container: 1.1s of refused dials, after
// which go-redis clients, their dial breaker tripped, dial once a second, came back after
// the holder's hand-off wait and let the scenario's holder write alone (a
// safe verdict that meant only that the fault had not landed). Otherwise,
// and for a paused container, it sends SIGKILL to the container's main
// process, as `docker kill`.
func (s *containerServer) kill(ctx context.Context) error {
	if s.inPlace(ctx) {
		return s.killInPlace(ctx)
	}
	id, err := s.current()
	if err != nil {
		return err
	}
	if _, err := s.engine.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill %s: %w", s.name, err)
	}
	// Wait until the engine has seen it exit, so a restart finds it stopped.
	for {
		ok, err := s.running(ctx)
		if err != nil || !ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *containerServer) pause(ctx context.Context) error {
	id, err := s.current()
	if err != nil {
		return err
	}
	if _, err := s.engine.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("pause %s: %w", s.name, err)
	}
	return nil
}

func (s *containerServer) resume(ctx context.Context) error {
	id, err := s.current()
	if err != nil {
		return err
	}
	if _, err := s.engine.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("unpause %s: %w", s.name, err)
	}
	return nil
}

// restart brings the server back on the same published port. A running
// supervised container restarts its server in place; otherwise the same
// container starts again (its file system, so its data, kept) or a new one
// from the image replaces it.
func (s *containerServer) restart(ctx context.Context, keepData bool) error {
	if s.inPlace(ctx) {
		return s.restartInPlace(ctx, keepData)
	}
	ok, err := s.running(ctx)
	if err == nil && ok {
		if err := s.kill(ctx); err != nil {
			return err
		}
	}
	if keepData {
		id, err := s.current()
		if err != nil {
			return err
		}
		if _, err := s.engine.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("start %s again: %w", s.name, err)
		}
	} else {
		s.remove(ctx)
		if err := s.create(ctx); err != nil {
			return err
		}
	}
	if err := s.waitReady(ctx); err != nil {
		return fmt.Errorf("%s did not become ready after a restart: %w\n--- last lines of its log ---\n%s", s.node.Name, err, s.logTail(20))
	}
	return nil
}

// restartInPlace has the supervisor of a running container SIGKILL its
// server, if it runs, and start it again, keeping or emptying its data
// dir. Replacing the container instead takes 0.4s on a quiet machine and
// more under load, and all that time its published port refuses dials: after
// PoolSize refused dials a go-redis client stops dialling and probes once a
// second, so it came back about a second after the kill, when the victim of
// the server-restart scenario had long gone on alone. In place, the port
// stays up and clients are back as soon as the server answers, as in local
// mode.
func (s *containerServer) restartInPlace(ctx context.Context, keepData bool) error {
	signal := "USR1"
	if !keepData {
		signal = "USR2"
	}
	if _, err := s.signalSupervisor(ctx, signal); err != nil {
		return fmt.Errorf("restart %s: %w", s.name, err)
	}
	if err := s.waitReady(ctx); err != nil {
		return fmt.Errorf("%s did not become ready after a restart: %w\n--- last lines of its log ---\n%s", s.node.Name, err, s.logTail(20))
	}
	return nil
}

// killInPlace has the supervisor SIGKILL its server and start none until
// restartInPlace.
func (s *containerServer) killInPlace(ctx context.Context) error {
	killed, err := s.signalSupervisor(ctx, "HUP")
	if err != nil {
		return fmt.Errorf("kill %s: %w", s.name, err)
	}
	if len(killed) == 0 {
		return fmt.Errorf("%s is not running", s.name)
	}
	return nil
}

// signalSupervisor sends signal to the supervisor (the container's PID 1)
// and returns once the server that ran then, if any, is gone (and reaped):
// the signal is asynchronous, and the old server must be gone before a
// readiness probe can mean a new one. It returns the old server's pids.
func (s *containerServer) signalSupervisor(ctx context.Context, signal string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	id, err := s.current()
	if err != nil {
		return nil, err
	}
	old, err := s.serverPIDs(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.engine.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: signal}); err != nil {
		return nil, fmt.Errorf("send SIG%s to its supervisor: %w", signal, err)
	}
	for len(old) > 0 {
		now, err := s.serverPIDs(ctx, id)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(now, func(p string) bool { return slices.Contains(old, p) }) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the old server did not exit after SIG%s: %w", signal, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return old, nil
}

// serverPIDs lists the host pids of the supervisor's children named as the
// server (its others are the sleep of a server held down).
func (s *containerServer) serverPIDs(ctx context.Context, id string) ([]string, error) {
	top, err := s.engine.cli.ContainerTop(ctx, id, client.ContainerTopOptions{Arguments: []string{"-o", "pid,ppid,comm"}})
	if err != nil {
		return nil, fmt.Errorf("list the processes of %s: %w", s.name, err)
	}
	r, err := s.engine.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", s.name, err)
	}
	if r.Container.State == nil || r.Container.State.Pid == 0 {
		return nil, fmt.Errorf("%s is not running", s.name)
	}
	pidCol, ppidCol, cmdCol := slices.Index(top.Titles, "PID"), slices.Index(top.Titles, "PPID"), slices.Index(top.Titles, "COMMAND")
	if pidCol < 0 || ppidCol < 0 || cmdCol < 0 {
		return nil, fmt.Errorf("list the processes of %s: no PID/PPID/COMMAND columns in %v", s.name, top.Titles)
	}
	supervisor := strconv.Itoa(r.Container.State.Pid)
	var pids []string
	for _, p := range top.Processes {
		if len(p) > max(pidCol, ppidCol, cmdCol) && p[ppidCol] == supervisor && p[cmdCol] == s.command {
			pids = append(pids, p[pidCol])
		}
	}
	return pids, nil
}

// remove deletes the container (data and all) but keeps it counted in the
// run, for a restart; stop also untracks it.
func (s *containerServer) remove(ctx context.Context) {
	s.mu.Lock()
	id := s.id
	s.id = ""
	s.mu.Unlock()
	if id != "" {
		_, _ = s.engine.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
}

func (s *containerServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.remove(ctx)
	s.engine.forget(ctx, s)
}

// pid is the host pid of the server: a supervised container's server
// process, else the container's main process; 0 if not running.
func (s *containerServer) pid() int {
	id, err := s.current()
	if err != nil {
		return 0
	}
	if s.supervised {
		pids, err := s.serverPIDs(context.Background(), id)
		if err != nil || len(pids) == 0 {
			return 0
		}
		pid, _ := strconv.Atoi(pids[0])
		return pid
	}
	r, err := s.engine.cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if err != nil || r.Container.State == nil {
		return 0
	}
	return r.Container.State.Pid
}

// disconnect cuts the container off its network: its published port and its
// peers no longer reach it, and packets on open connections go nowhere.
func (s *containerServer) disconnect(ctx context.Context) error {
	id, err := s.current()
	if err != nil {
		return err
	}
	s.engine.mu.Lock()
	nw := s.engine.network
	s.engine.mu.Unlock()
	if _, err := s.engine.cli.NetworkDisconnect(ctx, nw, client.NetworkDisconnectOptions{Container: id, Force: true}); err != nil {
		return fmt.Errorf("disconnect %s from %s: %w", s.name, nw, err)
	}
	return nil
}

// reconnect attaches the container to its network again, under its names.
func (s *containerServer) reconnect(ctx context.Context) error {
	id, err := s.current()
	if err != nil {
		return err
	}
	s.engine.mu.Lock()
	nw := s.engine.network
	s.engine.mu.Unlock()
	_, err = s.engine.cli.NetworkConnect(ctx, nw, client.NetworkConnectOptions{Container: id, EndpointConfig: &network.EndpointSettings{Aliases: s.aliases()}})
	if err != nil {
		return fmt.Errorf("reconnect %s to %s: %w", s.name, nw, err)
	}
	return nil
}

// logTail returns the last lines the server wrote.
func (s *containerServer) logTail(lines int) string {
	id, err := s.current()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.engine.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(lines)})
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return stripLogFrames(b)
}

// stripLogFrames removes the 8-byte stream headers of a non-TTY container log.
func stripLogFrames(b []byte) string {
	var out strings.Builder
	for len(b) >= 8 && (b[0] == 1 || b[0] == 2) {
		size := int(b[4])<<24 | int(b[5])<<16 | int(b[6])<<8 | int(b[7])
		b = b[8:]
		if size > len(b) {
			size = len(b)
		}
		out.Write(b[:size])
		b = b[size:]
	}
	out.Write(b)
	return strings.TrimRight(out.String(), "\n")
}

// portBindings publishes the container's port on ip:host only, loopback
// or the run's network's gateway (publishedOn): the lab never listens on an
// address another machine reaches.
func portBindings(port string, ip netip.Addr, host int) network.PortMap {
	return network.PortMap{network.MustParsePort(port): {{HostIP: ip, HostPort: strconv.Itoa(host)}}}
}
