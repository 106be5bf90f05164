package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	KindSentinel  = topology.Sentinel
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

	ready func(ctx context.Context, n *Node) error // answers nil once the server serves

	// clockFile is set when the server runs with the clockshift library:
	// the offset file the shim reads, on this machine's file system (a
	// container mounts it at the same path), so JumpClock is the same on
	// every backend.
	clockFile string

	// server is where the server runs, which the faults below go through;
	// nil until it is started.
	server serverBackend
}

// serverBackend is where a node's server runs: a local process group
// (processServer, node_process.go) or a container of the Docker engine
// (containerServer, containers_server.go). Each fault means the same on
// both: the server crashed, frozen, started again with or without its data,
// cut off its network.
type serverBackend interface {
	// pid is the server process's pid on this machine, 0 if not running.
	pid() int
	// kill crashes the server with SIGKILL: no shutdown, no final fsync.
	kill(ctx context.Context) error
	// pause freezes the server (connections stay open, nothing answers);
	// resume lets it go on.
	pause(ctx context.Context) error
	resume(ctx context.Context) error
	// restart kills the server if it runs, optionally wipes its data, and
	// starts it again on the same address, returning once it answers.
	restart(ctx context.Context, keepData bool) error
	// disconnect cuts the server off its network until reconnect.
	disconnect(ctx context.Context) error
	reconnect(ctx context.Context) error
	// logTail returns the last lines the server wrote.
	logTail(lines int) string
	// stop kills the server and frees what the backend holds for it.
	stop()
}

var (
	_ serverBackend = (*processServer)(nil)
	_ serverBackend = (*containerServer)(nil)
)

// faultTimeout bounds a fault that takes no context (Kill, Pause, Resume).
const faultTimeout = 30 * time.Second

// JumpClock moves the server's wall clock to true time + d (within 5ms).
// Only nodes started with ClockShift can jump.
func (n *Node) JumpClock(d time.Duration) error {
	if n.clockFile == "" {
		return fmt.Errorf("%s was not started with a movable clock", n.Name)
	}
	return clockjump.Set(n.clockFile, d)
}

// LogPath is where a local server's stdout and stderr go, kept for failure
// reports (a container's log is the engine's: see LogTail).
func (n *Node) LogPath() string { return n.Dir + "/server.log" }

// PID of the running server process (the group leader), 0 if not running.
func (n *Node) PID() int { return n.server.pid() }

// processPID is the pid the server itself reports (Redis's process_id):
// the started process's when it runs here, 0 in a container, whose server
// sees its own pid namespace.
func (n *Node) processPID() int {
	if _, local := n.server.(*processServer); !local {
		return 0
	}
	return n.server.pid()
}

// Kill crashes the server with SIGKILL: no shutdown, no final fsync.
func (n *Node) Kill() error {
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	return n.server.kill(ctx)
}

// Pause freezes the server (SIGSTOP, or the container's cgroup freezer);
// connections stay open, nothing is answered.
func (n *Node) Pause() error {
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	return n.server.pause(ctx)
}

// Resume continues a paused server.
func (n *Node) Resume() error {
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	return n.server.resume(ctx)
}

// Restart kills the server if it runs, optionally wipes its data, and starts
// it again on the same address, returning once it answers requests.
func (n *Node) Restart(ctx context.Context, keepData bool) error {
	return n.server.restart(ctx, keepData)
}

// Stop kills the server and removes its directory.
func (n *Node) Stop() {
	// A node whose start failed early has a directory and no server yet.
	if n.server != nil {
		n.server.stop()
	}
	_ = os.RemoveAll(n.Dir)
}

// Disconnect cuts a container-mode server off its network (clients and
// peers no longer reach it; packets on open connections are lost) until
// Reconnect. Local servers are cut by the hosts' network faults instead.
func (n *Node) Disconnect(ctx context.Context) error { return n.server.disconnect(ctx) }

// Reconnect undoes Disconnect.
func (n *Node) Reconnect(ctx context.Context) error { return n.server.reconnect(ctx) }

// LogTail returns the last lines of the server's log.
func (n *Node) LogTail(lines int) string { return n.server.logTail(lines) }

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

// listenOn returns the address a server binds to and port, or a free port
// on it when port is zero.
func listenOn(h *hosts.Host, port int) (string, int, error) {
	if port == 0 {
		return listen(h)
	}
	if h == nil {
		return "127.0.0.1", port, nil
	}
	return h.IP.String(), port, nil
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

// freePort finds a free loopback port below the kernel's ephemeral range
// (ip_local_port_range), where no client's outgoing connection takes its
// source port: a server restarted on its port by a fault must find it free,
// and a port the kernel handed out with ":0" is one a client can take the
// moment the server lets go of it. Seen in a CI run: a five-node Redis lost
// a node between two checks, and a fresh Redis stopped answering, as the
// test suite's thousands of connections cycled through that range. A
// random pick, held briefly to prove it free; ":0" when the range leaves
// too little room below it.
//
// A Redis Cluster node also listens on its port + 10000 (the cluster bus),
// so the pick leaves that one below the range too, and free: a bus port in
// the range failed a CI run with "Address already in use". And a port is
// picked below the floor's bus ports (serverPortFloor + clusterBusOffset)
// when the range has room for both, so no server is given a port that is
// a cluster node's bus port: a Redis Cluster node of one explore failed to
// start, its bus port 20229 taken, while other explores ran beside it.
//
// A port is free when picked but taken only when its server starts, so a
// pick is remembered (recentPorts) and not handed out again soon: two
// members of one group, or two cells side by side, given one port would
// start one server and lose the other ("Address already in use"), and the
// lost one's readiness probe is answered by the first. Seen so: a Sentinel
// group whose sentinel-2 never started, because sentinel-1 listened on its
// port, and the other two never heard of it ("sentinels did not find each
// other").
func freePort() (int, error) {
	top := ephemeralLow() - clusterBusOffset
	if top > serverPortFloor+clusterBusOffset {
		top = serverPortFloor + clusterBusOffset
	}
	if top-serverPortFloor >= 1000 {
		for try := 0; try < 100; try++ {
			p := serverPortFloor + rand.IntN(top-serverPortFloor)
			if free(p) && free(p+clusterBusOffset) && recentPorts.take(p) {
				return p, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// recentPorts are the ports freePort handed out last. A server binds its
// port within seconds of the pick; 1024 picks are dozens of cells' worth,
// and still a small share of the range they come from.
var recentPorts = &portRing{ring: make([]int, 1024)}

// portRing remembers the last len(ring) ports handed out.
type portRing struct {
	mu   sync.Mutex
	ring []int
	next int
}

// take hands p out unless it was handed out among the last len(ring).
func (r *portRing) take(p int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.ring, p) {
		return false
	}
	r.ring[r.next] = p
	r.next = (r.next + 1) % len(r.ring)
	return true
}

// serverPortFloor is the lowest port a server is given: above the ports
// system services listen on.
const serverPortFloor = 10000

// clusterBusOffset is how far above its port a Redis Cluster node listens
// for the other nodes (Redis's default cluster-port).
const clusterBusOffset = 10000

// free reports whether a loopback port can be bound now.
func free(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 if
// it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
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
