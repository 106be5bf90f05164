// Package hosts gives the lab hosts of its own: each host is a Linux network
// namespace with one veth link onto a bridge the lab creates, and an address
// in 10.213.77.0/24, a private range used only inside these namespaces.
//
// The bridge lives in a namespace of its own (the "switch", ll-<run>-sw),
// never in the machine's root namespace: the root namespace gets no
// interface, no address and no route, so nothing the lab does can clash with
// the machine's own network or with another run's (each run has its own
// switch, so every run can use the same range). The lab process itself stays
// in the root namespace and reaches the hosts from the switch, through
// Network.DialContext (the switch's bridge holds 10.213.77.1): that path is
// the lab's control path and no network fault ever cuts it.
//
// Every namespace is named ll-<pid>-<seq>-..., the pid being the lab
// process that owns it, and /run/locklab/<pid>.owner records that process's
// start time. New first removes every lab namespace whose owner is gone (a
// lab that was SIGKILLed cannot clean up after itself), killing whatever
// still runs inside. RemoveAll removes this process's namespaces; the
// cluster package calls it from StopAll, so a normal end, a failure and
// Ctrl-C all remove them. Deleting a namespace removes its veth, its qdiscs
// and its firewall rules with it. Sweep is registered with package
// leftovers, so every run's start (leftovers.Sweep) removes dead runs'
// namespaces with their other leftovers.
package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/locklab/locklab/cluster/leftovers"
)

const (
	// Prefix starts the name of every namespace the lab creates.
	Prefix = "ll-"
	// Subnet is the range host addresses come from, inside lab namespaces only.
	Subnet = "10.213.77.0/24"
	// Dev is the name of every host's one interface.
	Dev = "eth0"

	netnsDir = "/run/netns"
	stateDir = "/run/locklab"
	maxHosts = 240 // .10 to .249
)

// switchAddr is the bridge's own address: the lab's vantage point.
var switchAddr = netip.MustParseAddr("10.213.77.1")

// Available reports why hosts cannot be made here, or nil: it needs root (to
// create namespaces) and the ip command from iproute2.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("hosts need root (network namespaces); run as root to use them")
	}
	for _, tool := range []string{"ip", "iptables", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("hosts need %s (install iproute2 and iptables, or run scripts/setup.sh): %w", tool, err)
		}
	}
	// The servers then run in containers of the Docker engine, not on hosts;
	// cluster/containers.go cuts a container off its network instead.
	if os.Getenv("LOCKLAB_SERVERS") == "containers" {
		return errors.New("hosts (network namespaces) are not applicable in container mode (LOCKLAB_SERVERS=containers): the servers run in containers; run network faults with LOCKLAB_SERVERS=local")
	}
	return nil
}

// Network is one run's hosts and the switch that links them.
type Network struct {
	// RunID is <pid>-<seq>: unique among live runs, and it names the owner.
	RunID string

	mu     sync.Mutex
	hosts  []*Host
	closed bool
}

// Host is one network namespace with one address.
type Host struct {
	Name string     // the lab's name for it, e.g. "postgres" or "client-0"
	NS   string     // the namespace, e.g. ll-4242-1-h3
	IP   netip.Addr // its address in Subnet
	net  *Network
}

var (
	liveMu sync.Mutex
	live   = map[*Network]struct{}{}
	seq    int
)

func init() { leftovers.Register("hosts", Sweep) }

// New creates a switch (a namespace holding a bridge) for one run, after
// removing what dead runs left behind.
func New(ctx context.Context) (n *Network, err error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if err := Sweep(ctx); err != nil {
		return nil, err
	}
	liveMu.Lock()
	// Owner file first, under the lock: a concurrent Sweep must never see
	// this run's namespaces without it, nor a Close remove it meanwhile.
	if err := writeOwner(); err != nil {
		liveMu.Unlock()
		return nil, err
	}
	seq++
	n = &Network{RunID: fmt.Sprintf("%d-%d", os.Getpid(), seq)}
	live[n] = struct{}{}
	liveMu.Unlock()
	defer func() {
		if err != nil {
			n.Close()
			n = nil
		}
	}()
	// The switch is made under the network's lock, as AddHost makes a
	// host: a Close (StopAll at a Ctrl-C) that comes meanwhile waits for it
	// and removes it, and one that came first leaves nothing to make.
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("network is closed: every server is being stopped")
	}
	sw := n.switchNS()
	if err := run(ctx, "ip", "netns", "add", sw); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "br0", "type", "bridge"},
		{"addr", "add", switchAddr.String() + "/24", "dev", "br0"},
		{"link", "set", "br0", "up"},
	} {
		if err := run(ctx, "ip", append([]string{"-n", sw}, args...)...); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (n *Network) switchNS() string { return Prefix + n.RunID + "-sw" }

// AddHost creates a host named name (unique in the network): a namespace with
// lo up and eth0, linked to the bridge, holding the next free address.
func (n *Network) AddHost(ctx context.Context, name string) (*Host, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("network is closed")
	}
	for _, h := range n.hosts {
		if h.Name == name {
			return nil, fmt.Errorf("host %q already exists", name)
		}
	}
	i := len(n.hosts) + 1
	if i > maxHosts {
		return nil, fmt.Errorf("at most %d hosts per run", maxHosts)
	}
	h := &Host{Name: name, NS: fmt.Sprintf("%s%s-h%d", Prefix, n.RunID, i),
		IP: netip.AddrFrom4([4]byte{10, 213, 77, byte(9 + i)}), net: n}
	if err := run(ctx, "ip", "netns", "add", h.NS); err != nil {
		return nil, fmt.Errorf("host %s: %w", name, err)
	}
	n.hosts = append(n.hosts, h)
	sw, port := n.switchNS(), fmt.Sprintf("v%d", i)
	for _, c := range [][]string{
		// Both ends are created straight inside their namespaces: no name is
		// ever taken in the root namespace, where another run could clash.
		{"-n", sw, "link", "add", port, "type", "veth", "peer", "name", Dev, "netns", h.NS},
		{"-n", sw, "link", "set", port, "master", "br0"},
		{"-n", sw, "link", "set", port, "up"},
		{"-n", h.NS, "link", "set", "lo", "up"},
		{"-n", h.NS, "addr", "add", h.IP.String() + "/24", "dev", Dev},
		{"-n", h.NS, "link", "set", Dev, "up"},
	} {
		if err := run(ctx, "ip", c...); err != nil {
			return nil, fmt.Errorf("host %s: %w", name, err)
		}
	}
	return h, nil
}

// Hosts returns every host of the network, in the order they were added.
func (n *Network) Hosts() []*Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Host(nil), n.hosts...)
}

// Host returns the host named name, or nil.
func (n *Network) Host(name string) *Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, h := range n.hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Namespaces lists the namespaces of this network, the switch's last.
func (n *Network) Namespaces() []string {
	var out []string
	for _, h := range n.Hosts() {
		out = append(out, h.NS)
	}
	return append(out, n.switchNS())
}

// DialContext connects from the switch, the lab's vantage point: the lab's
// own probes and resets use it; network faults never cut it.
func (n *Network) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialIn(ctx, filepath.Join(netnsDir, n.switchNS()), network, addr)
}

// Close kills every process still inside the network's namespaces and
// removes them (with their links, qdiscs and firewall rules). Safe to call
// more than once.
func (n *Network) Close() error {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	var errs []error
	for _, ns := range n.Namespaces() {
		if err := removeNS(ns); err != nil {
			errs = append(errs, err)
		}
	}
	liveMu.Lock()
	delete(live, n)
	if len(live) == 0 {
		_ = os.Remove(ownerFile(os.Getpid()))
	}
	liveMu.Unlock()
	return errors.Join(errs...)
}

// RemoveAll closes every network this process created.
func RemoveAll() {
	liveMu.Lock()
	ns := make([]*Network, 0, len(live))
	for n := range live {
		ns = append(ns, n)
	}
	liveMu.Unlock()
	for _, n := range ns {
		_ = n.Close()
	}
}

// Addr is the host's address joined with port, e.g. "10.213.77.10:6379".
func (h *Host) Addr(port int) string {
	return net.JoinHostPort(h.IP.String(), strconv.Itoa(port))
}

// Network is the network the host belongs to.
func (h *Host) Network() *Network { return h.net }

// Do runs f on an OS thread that has joined the host's namespace: every
// socket f creates, and every process it starts, belongs to the host for
// good. f must not start goroutines that expect to be inside the host.
func (h *Host) Do(f func() error) error {
	return inNS(filepath.Join(netnsDir, h.NS), f)
}

// Start starts cmd inside the host: the process's pid is cmd's own (the fork
// happens on a thread inside the namespace; nothing is wrapped around it).
func (h *Host) Start(cmd *exec.Cmd) error {
	return h.Do(cmd.Start)
}

// DialContext connects from inside the host.
func (h *Host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialIn(ctx, filepath.Join(netnsDir, h.NS), network, addr)
}

// Listen listens inside the host (addr like "10.213.77.10:0" or ":0").
func (h *Host) Listen(network, addr string) (l net.Listener, err error) {
	err = h.Do(func() error {
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// ListenPacket opens a datagram socket inside the host.
func (h *Host) ListenPacket(network, addr string) (c net.PacketConn, err error) {
	err = h.Do(func() error {
		c, err = net.ListenPacket(network, addr)
		return err
	})
	return c, err
}

// FreePort returns a TCP port free on the host's address.
func (h *Host) FreePort() (int, error) {
	l, err := h.Listen("tcp", h.Addr(0))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", h.Name, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Run runs a tool (iptables, tc, ...) inside the host and returns its error
// with its output.
func (h *Host) Run(ctx context.Context, name string, args ...string) error {
	return run(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Output runs a tool inside the host and returns its standard output.
func (h *Host) Output(ctx context.Context, name string, args ...string) (string, error) {
	return output(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Feed runs a tool inside the host with input on its standard input (an
// iptables-restore transaction; "" for none) and returns its standard
// output, or its error with what it wrote to standard error. It forks on a
// thread inside the namespace, as Start does, rather than through ip netns
// exec: a network fault reads and writes the rules of a dozen hosts at
// once, and one process per step less is what keeps a cut close to one
// instant on a loaded 2-core machine.
func (h *Host) Feed(ctx context.Context, input, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(input)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := h.Start(cmd); err != nil {
		return "", fmt.Errorf("%s in %s: %w", name, h.Name, err)
	}
	if err := cmd.Wait(); err != nil {
		return out.String(), fmt.Errorf("%s %s in %s: %w: %s", name, strings.Join(args, " "), h.Name, err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}

func dialIn(ctx context.Context, nsPath, network, addr string) (c net.Conn, err error) {
	err = inNS(nsPath, func() error {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// inNS runs f in a fresh goroutine locked to its OS thread, with that thread
// moved into the namespace at nsPath and moved back afterwards. Should the
// move back fail the goroutine ends still locked, and Go then discards the
// thread rather than reuse one that sits in the wrong namespace.
func inNS(nsPath string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open own network namespace: %w", err)
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open namespace %s: %w", nsPath, err)
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter namespace %s: %w", nsPath, err)
			return
		}
		ferr := f()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}

// Sweep removes every lab namespace whose owner process is gone, killing
// what still runs inside, and the owners' state files.
func Sweep(ctx context.Context) error {
	entries, err := os.ReadDir(netnsDir)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("list namespaces: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, ok := ownerOf(e.Name())
		if !ok || ownerAlive(pid) {
			continue
		}
		if err := removeNS(e.Name()); err != nil {
			errs = append(errs, err)
		}
	}
	states, _ := os.ReadDir(stateDir)
	for _, s := range states {
		if pid, err := strconv.Atoi(strings.TrimSuffix(s.Name(), ".owner")); err == nil && !ownerAlive(pid) {
			_ = os.Remove(filepath.Join(stateDir, s.Name()))
		}
	}
	return errors.Join(errs...)
}

// Leftovers lists the lab namespaces that exist now, whoever owns them.
func Leftovers() []string {
	entries, _ := os.ReadDir(netnsDir)
	var out []string
	for _, e := range entries {
		if _, ok := ownerOf(e.Name()); ok {
			out = append(out, e.Name())
		}
	}
	return out
}

// ownerOf parses the owner pid from a name like ll-4242-1-h3.
func ownerOf(ns string) (int, bool) {
	rest, ok := strings.CutPrefix(ns, Prefix)
	if !ok {
		return 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) < 3 {
		return 0, false
	}
	pid, err := strconv.Atoi(f[0])
	return pid, err == nil && pid > 0
}

// ownerAlive reports whether pid is the very process that wrote its owner
// file: same pid and same start time, so a reused pid is not mistaken for it.
func ownerAlive(pid int) bool {
	want, err := os.ReadFile(ownerFile(pid))
	if err != nil {
		return false
	}
	return leftovers.Owner{PID: pid, Start: strings.TrimSpace(string(want))}.Alive()
}

func ownerFile(pid int) string { return filepath.Join(stateDir, strconv.Itoa(pid)+".owner") }

func writeOwner() error {
	self, err := leftovers.Self()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", stateDir, err)
	}
	if err := os.WriteFile(ownerFile(os.Getpid()), []byte(self.Start+"\n"), 0o644); err != nil {
		return fmt.Errorf("record owner: %w", err)
	}
	return nil
}

// removeNS kills every process in the namespace, then deletes it. A
// namespace stays alive while a process is in it, so the kill comes first.
func removeNS(ns string) error {
	if _, err := os.Stat(filepath.Join(netnsDir, ns)); os.IsNotExist(err) {
		return nil
	}
	ctx := context.Background()
	if out, err := output(ctx, "ip", "netns", "pids", ns); err == nil {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if err := run(ctx, "ip", "netns", "delete", ns); err != nil {
		return fmt.Errorf("remove namespace %s: %w", ns, err)
	}
	return nil
}

func run(ctx context.Context, name string, args ...string) error {
	_, err := output(ctx, name, args...)
	return err
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
