package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	lin "github.com/locklab/locklab/linearizability"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/netproxy"
	"github.com/locklab/locklab/nemesis"
)

// ErrInProcess is why a lock whose clients share one process cannot be
// run as worker processes, so no client fault can reach it one by one.
var ErrInProcess = errors.New("clients share one process, so no client fault applies and no worker can run it")

// system is the running system the nemesis acts on.
type system struct {
	env   *Env
	mu    sync.Mutex
	slots []*Worker // the process now in each client slot
	all   []*Worker // every worker started, killed ones too (their histories count)
	next  int       // the next client id
	work  func(*WorkerSpec)
	// sections follows each worker's history, for faults aimed at the
	// holder (see holder).
	sections map[*Worker]*sectionWatch
	// net holds the clients' proxies to the lock servers, when a fault
	// acts on those links (see proxies.go); nil: clients dial the servers.
	net *netproxy.Net
}

// clientProcess is a client's process as a fault sees it: its signals and
// kill, and its own clock.
type clientProcess struct {
	*cluster.Process
	w *Worker
}

func (p clientProcess) SkewClock(d time.Duration) error {
	err := p.w.SkewClock(d)
	if err != nil {
		select {
		case <-p.w.proc.Done():
			// A write to a worker that ended on its own: say so, with
			// its last words, rather than "file already closed".
			return fmt.Errorf("worker %d had exited (%v): %w\n%s", p.w.ID, p.w.proc.Err(), err, p.w.LogTail())
		default:
		}
	}
	return err
}

func (x *system) Client(slot int) (nemesis.Process, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slot < 0 || slot >= len(x.slots) {
		return nil, fmt.Errorf("no client slot %d", slot)
	}
	return clientProcess{Process: x.slots[slot].proc, w: x.slots[slot]}, nil
}

func (x *system) ReplaceClient(ctx context.Context, slot int) (int, error) {
	x.mu.Lock()
	id := x.next
	x.next++
	work := x.work
	x.mu.Unlock()
	// A new id: the killed process's sections stay in the history under
	// its own, with the one it died in left unknown.
	w, err := x.start(ctx, id, work)
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.slots[slot] = w
	x.all = append(x.all, w)
	return id, nil
}

func (x *system) Server(name string) (*cluster.Node, error) {
	n := x.env.Topo.Node(name)
	if n == nil {
		return nil, fmt.Errorf("no server %q in this run", name)
	}
	return n, nil
}

func (x *system) TTL() time.Duration { return x.env.TTL }

func (x *system) Clients() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.slots)
}

func (x *system) ClientHost(slot int) (*hosts.Host, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if slot < 0 || slot >= len(x.slots) {
		return nil, fmt.Errorf("no client slot %d", slot)
	}
	return x.host(fmt.Sprintf("client-%d", x.slots[slot].ID))
}

func (x *system) ServerHost(name string) (*hosts.Host, error) { return x.host(name) }

func (x *system) host(name string) (*hosts.Host, error) {
	if x.env.Topo.Net == nil {
		return nil, errors.New("this run has no hosts of its own, so no network fault can strike it")
	}
	h := x.env.Topo.Net.Host(name)
	if h == nil {
		return nil, fmt.Errorf("no host %q in this run", name)
	}
	return h, nil
}

// ServerWithRole asks each lock server its role (the first in name order
// that has it wins), so a fault aimed at the leader strikes whichever
// server leads now.
func (x *system) ServerWithRole(ctx context.Context, role string) (string, error) {
	if role == nemesis.MasterTarget {
		// On a Redis Cluster every master masters some slots: the master
		// is the one of the run's lock key, asked of the members.
		if name, ok, err := x.env.Topo.MasterOf(ctx, x.env.Key); ok {
			return name, err
		}
	}
	var seen []string
	for _, name := range x.LockServers() {
		r, err := x.env.Topo.Role(ctx, name)
		if err != nil {
			seen = append(seen, name+": "+err.Error())
			continue
		}
		if r == role {
			return name, nil
		}
		seen = append(seen, name+": "+r)
	}
	// Between a master's loss and a promotion no server is one: the role
	// may come back, so a step aimed at it cannot strike now.
	return "", fmt.Errorf("no lock server is the %s now (%s): %w", role, strings.Join(seen, "; "), nemesis.ErrNotNow)
}

// serverOf names the lock server the client in slot is connected to now,
// read from the established TCP connections on the client's own host
// (`ss`), matched against the lock servers' addresses. A client connected
// to none, or to several, is an error: the fault would aim at a guess.
func (x *system) serverOf(ctx context.Context, slot int) (string, error) {
	h, err := x.ClientHost(slot)
	if err != nil {
		return "", err
	}
	out, err := h.Output(ctx, "ss", "-Htn", "state", "established")
	if err != nil {
		return "", fmt.Errorf("list client-%d's connections: %w", slot, err)
	}
	var found []string
	for _, name := range x.LockServers() {
		n := x.env.Topo.Node(name)
		if n == nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			// Recv-Q Send-Q Local Peer: the peer is the last column.
			if len(f) >= 4 && samePeer(f[len(f)-1], n.Addr) && !slices.Contains(found, name) {
				found = append(found, name)
			}
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("client-%d is connected to %d lock servers (%v), not one", slot, len(found), found)
	}
	return found[0], nil
}

// samePeer reports whether ss's peer column names addr. A client on a
// dual-stack socket (a JVM's, by default) is shown connected to the
// IPv4-mapped form, [::ffff:10.0.0.3]:2181, of the server's 10.0.0.3:2181.
func samePeer(peer, addr string) bool {
	p, err1 := netip.ParseAddrPort(peer)
	a, err2 := netip.ParseAddrPort(addr)
	if err1 != nil || err2 != nil {
		return peer == addr
	}
	return p.Addr().Unmap() == a.Addr().Unmap() && p.Port() == a.Port()
}

func (x *system) LockServers() []string {
	var out []string
	for _, n := range x.env.Topo.Nodes() {
		if n != x.env.Topo.Resource {
			out = append(out, n.Name)
		}
	}
	return out
}

// shortWork gives every client the short sections of the scripted
// scenarios from its next section on (nemesis.Schedule.LongFor), a
// replacement started later too.
func (x *system) shortWork() {
	x.mu.Lock()
	defer x.mu.Unlock()
	long := x.work
	x.work = func(ws *WorkerSpec) {
		long(ws)
		ws.WorkMin, ws.WorkMax = nemesis.ShortWorkMin, nemesis.ShortWorkMax
	}
	for _, w := range x.slots {
		// A killed worker cannot hear it, and needs not.
		w.SetWork(nemesis.ShortWorkMin, nemesis.ShortWorkMax)
	}
}

// stopAll stops every worker still running (each finishes its section).
func (x *system) stopAll() {
	x.mu.Lock()
	all := append([]*Worker(nil), x.all...)
	for _, sw := range x.sections {
		sw.tail.close()
	}
	x.sections = nil
	x.mu.Unlock()
	x.env.StopWorkers(all)
}

// injection is the record of step st striking target (a holder already
// resolved to its slot): the client it strikes by id, as the history
// knows it, or the servers.
func (x *system) injection(st nemesis.Step, target string) lin.Injection {
	inj := lin.Injection{Kind: st.Kind, Target: st.Target, Risk: nemesis.RiskOf(st.Kind, target)}
	aimed := target
	client, server, link := nemesis.SplitLink(target)
	if link {
		// A client cut off one server: both are named.
		target = client
		inj.Servers = []string{server}
	}
	if slot, err := nemesis.ClientSlot(target); err == nil {
		x.mu.Lock()
		if slot >= 0 && slot < len(x.slots) {
			inj.Clients = []int{x.slots[slot].ID}
		}
		// A split that takes more clients than the holder to the old
		// side names them all: the checker tells the sides apart by them.
		if slots, ok := nemesis.SplitClients(st.Kind, aimed, len(x.slots)); ok {
			inj.Clients = nil
			for _, s := range slots {
				inj.Clients = append(inj.Clients, x.slots[s].ID)
			}
		}
		x.mu.Unlock()
		return inj
	}
	inj.Servers = strings.Split(target, "+")
	return inj
}
