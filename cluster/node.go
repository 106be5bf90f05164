package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/faults/clockjump"
	"github.com/locklab/locklab/topology"
)

// Kind names a server type: topology's, under the names cluster's code
// has used.
type Kind = topology.Kind

const (
	KindRedis     = topology.Redis
	KindZooKeeper = topology.ZooKeeper
	KindPostgres  = topology.Postgres
)

// Node is one server the lab started. Its address never changes across
// restarts, so clients (and fault proxies) can keep pointing at it.
type Node struct {
	Kind Kind
	Name string // e.g. "redis-3", shown in histories and reports
	Addr string // 127.0.0.1:port, or the host's address:port when on a host
	Dir  string // data and log dir, removed by Stop
	// Host is the lab's host the server runs on (its own network
	// namespace), nil on the machine's loopback.
	Host *hosts.Host

	launch func(ctx context.Context, n *Node) (*Process, error)
	ready  func(ctx context.Context, n *Node) error
	wipe   func(n *Node) error // removes the data, keeps the dir usable

	clockFile string // set when the server runs with the clockshift library

	// ctr is the node's container in container mode (containers.go), whose
	// faults go through the Docker engine; nil for a local process.
	ctr *dockerServer

	mu   sync.Mutex
	proc *Process
}

// JumpClock moves the server's wall clock to true time + d (within 5ms).
// Only nodes started with ClockShift can jump.
func (n *Node) JumpClock(d time.Duration) error {
	if n.clockFile == "" {
		return fmt.Errorf("%s was not started with a movable clock", n.Name)
	}
	return clockjump.Set(n.clockFile, d)
}

// LogPath is where the server's stdout and stderr go, kept for failure reports.
func (n *Node) LogPath() string { return n.Dir + "/server.log" }

// PID of the running server process (the group leader), 0 if not running.
func (n *Node) PID() int {
	if n.ctr != nil {
		return n.ctr.pid()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil || n.proc.exited() {
		return 0
	}
	return n.proc.pid()
}

func (n *Node) start(ctx context.Context) error {
	p, err := n.launch(ctx, n)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := n.waitReady(ctx, p); err != nil {
		p.kill()
		return fmt.Errorf("%s did not become ready: %w\n--- last lines of %s ---\n%s", n.Name, err, n.LogPath(), n.LogTail(20))
	}
	return nil
}

// waitReady polls the node's readiness request until it succeeds, the
// process exits, or ctx ends.
func (n *Node) waitReady(ctx context.Context, p *Process) error {
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("process exited: %v", p.err)
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = n.ready(rctx, n)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last probe: %v)", ctx.Err(), last)
		case <-time.After(5 * time.Millisecond):
			// Probe often: a restart scenario measures from the crash, and a
			// lazy probe would add its own delay to every restart.
		}
	}
}

func (n *Node) current() (*Process, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil || n.proc.exited() {
		return nil, fmt.Errorf("%s is not running", n.Name)
	}
	return n.proc, nil
}

// Kill crashes the server with SIGKILL: no shutdown, no final fsync.
func (n *Node) Kill() error {
	if n.ctr != nil {
		return n.ctr.kill(context.Background())
	}
	p, err := n.current()
	if err != nil {
		return err
	}
	p.kill()
	return nil
}

// Pause freezes the server with SIGSTOP; connections stay open, nothing is answered.
func (n *Node) Pause() error {
	if n.ctr != nil {
		return n.ctr.pause(context.Background())
	}
	p, err := n.current()
	if err != nil {
		return err
	}
	return p.signalGroup(syscall.SIGSTOP)
}

// Resume continues a paused server with SIGCONT.
func (n *Node) Resume() error {
	if n.ctr != nil {
		return n.ctr.resume(context.Background())
	}
	p, err := n.current()
	if err != nil {
		return err
	}
	return p.signalGroup(syscall.SIGCONT)
}

// Restart kills the server if it runs, optionally wipes its data, and starts
// it again on the same port, returning once it answers requests.
func (n *Node) Restart(ctx context.Context, keepData bool) error {
	if n.ctr != nil {
		return n.ctr.restart(ctx, n, keepData)
	}
	if p, err := n.current(); err == nil {
		p.kill()
	}
	if !keepData {
		if err := n.wipe(n); err != nil {
			return fmt.Errorf("wipe %s: %w", n.Name, err)
		}
	}
	return n.start(ctx)
}

// Stop kills the server and removes its directory.
func (n *Node) Stop() {
	if n.ctr != nil {
		n.ctr.stop()
	}
	if p, err := n.current(); err == nil {
		p.kill()
	}
	_ = os.RemoveAll(n.Dir)
}

// Disconnect cuts a container-mode server off its network (clients and
// peers no longer reach it; packets on open connections are lost) until
// Reconnect. Local servers are cut by the hosts' network faults instead.
func (n *Node) Disconnect(ctx context.Context) error {
	if n.ctr == nil {
		return fmt.Errorf("%s is not a container: Disconnect applies in container mode only", n.Name)
	}
	return n.ctr.disconnect(ctx)
}

// Reconnect undoes Disconnect.
func (n *Node) Reconnect(ctx context.Context) error {
	if n.ctr == nil {
		return fmt.Errorf("%s is not a container: Reconnect applies in container mode only", n.Name)
	}
	return n.ctr.reconnect(ctx)
}

// LogTail returns the last lines of the server's log.
func (n *Node) LogTail(lines int) string {
	if n.ctr != nil {
		return n.ctr.logTail(lines)
	}
	b, err := os.ReadFile(n.LogPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// spawnLogged starts the server with its output appended to the node's log.
func (n *Node) spawnLogged(cmd *exec.Cmd) (*Process, error) {
	logf, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", n.LogPath(), err)
	}
	defer logf.Close() // the child has its own copy of the descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	return SpawnOn(n.Host, cmd)
}

// Dialer connects the lab itself to a server; nil means the default.
type Dialer = func(ctx context.Context, network, addr string) (net.Conn, error)

// dialer is how the lab's own probes reach the node: from the switch of the
// node's network when it runs on a host (the root namespace has no route
// there), else nil (the default dialer).
func (n *Node) dialer() Dialer {
	if n.Host == nil {
		return nil
	}
	return n.Host.Network().DialContext
}

// listen returns the address a server binds to and a free port on it.
func listen(h *hosts.Host) (string, int, error) {
	if h == nil {
		p, err := freePort()
		return "127.0.0.1", p, err
	}
	p, err := h.FreePort()
	return h.IP.String(), p, err
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// newNodeDir makes the node's temp dir, tracked so StopAll removes it.
func newNodeDir(name string) (string, error) {
	return leftovers.MakeDir(name)
}

// ErrMissingBinary is wrapped by the error returned when a server binary is
// not installed; the message names the package to install.
var ErrMissingBinary = errors.New("server binary not installed")

func missing(what, pkg string) error {
	return fmt.Errorf("%w: %s not found; install the %s package (on Debian/Ubuntu: apt-get update && apt-get install -y %s, or run `make setup`)", ErrMissingBinary, what, pkg, pkg)
}
