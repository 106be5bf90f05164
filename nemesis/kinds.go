package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// The process and clock fault kinds. The network kinds are in netkinds.go,
// the fail-over in failover.go.
const (
	ClientKill         = "client-kill"          // SIGKILL a client; a new process takes its slot at the heal
	ClientPause        = "client-pause"         // SIGSTOP a client (a GC pause), SIGCONT at the heal
	ServerKill         = "server-kill"          // SIGKILL a lock server; restart it with its data at the heal
	ServerRestartEmpty = "server-restart-empty" // SIGKILL a lock server; restart it without its data at the heal
	ServerPause        = "server-pause"         // SIGSTOP a lock server, SIGCONT at the heal
	ServerClockJump    = "server-clock-jump"    // move a Redis server's wall clock ahead, back at the heal
)

func init() {
	register(clientKill{})
	register(clientPause{})
	register(serverKill{name: ServerKill, keepData: true})
	register(serverKill{name: ServerRestartEmpty, keepData: false})
	register(serverPause{})
	register(clockJump{})
}

// HolderTarget is a target that names no client slot but whichever client
// is inside its critical section when the fault strikes; the runner picks
// it then (engine.RunSchedule). A fault that strikes a random client at
// a random moment mostly finds a waiter, which tells little about a lock;
// aimed at the holder it lands where a lock's flaws show, and a replay of
// the schedule strikes the holder again, whichever client that is then,
// so a counterexample found this way replays far more often.
const HolderTarget = "holder"

// strikesClients reports whether a kind's targets include client slots,
// so it can aim at the holder.
func strikesClients(targets []string) bool {
	return slices.ContainsFunc(targets, func(t string) bool {
		_, err := ClientSlot(t)
		return err == nil
	})
}

// ErrNotNow marks an inject refused because the servers are not, at that
// moment, in the state the fault needs (a master with two replicas
// online, say), as a schedule cut short by shrinking can leave them: the
// fault is valid for the lock and topology, and would strike in another
// run. Shrinking takes such a candidate for one that does not fail
// (engine.Explore); everywhere else it is an error like any other.
var ErrNotNow = errors.New("the servers are not in the state the fault needs now")

// errInProcess is why no client fault reaches an in-process lock.
var errInProcess = errors.New("its clients share one process, so no client can be crashed or paused on its own")

func clientApplies(spec impls.Spec, topo Topology) error {
	if spec.Backend.InProcess || topo.InProcess {
		return errInProcess
	}
	if topo.Clients < 2 {
		return errors.New("it needs at least two clients")
	}
	return nil
}

func clientTargets(topo Topology) []string {
	var out []string
	for i := 0; i < topo.Clients; i++ {
		out = append(out, "client-"+strconv.Itoa(i))
	}
	return out
}

// clientSlot parses "client-N".
func ClientSlot(target string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(target, "client-"))
	if err != nil || !strings.HasPrefix(target, "client-") || n < 0 {
		return 0, fmt.Errorf("target %q is not a client slot (client-N)", target)
	}
	return n, nil
}

func serverApplies(spec impls.Spec, topo Topology) error {
	if len(topo.Servers) == 0 {
		return fmt.Errorf("%s uses no lock server", spec.Name)
	}
	return nil
}

func serverTargets(topo Topology) []string {
	var out []string
	for _, s := range topo.Servers {
		out = append(out, s.Name)
	}
	if topo.Ensemble {
		if hasMaster(topo) {
			// A Sentinel group's roles are its Redis servers' own; a Redis
			// Cluster's master is the lock key's slot master.
			out = append(out, MasterTarget)
		} else {
			out = append(out, LeaderTarget, FollowerTarget)
			if holderHasOneServer(topo) {
				out = append(out, HolderServerTarget)
			}
		}
	}
	return out
}

// holderHasOneServer reports whether a client of the lock's servers keeps
// its session on one of them (cluster.ServerKind.OneServerSession), so the
// holder's server can be named when a fault strikes (HolderServerTarget).
// An etcd client holds a connection to every member: a step aimed at its
// holder's server had no server to strike (seen: explore's fenced etcd-lock
// on etcd-cluster, seed 3, ended at "client-0 is connected to 3 lock
// servers, not one").
func holderHasOneServer(topo Topology) bool {
	for _, s := range topo.Servers {
		k, err := cluster.KindOf(s.Kind)
		if err != nil || k.OneServerSession() != nil {
			return false
		}
	}
	return len(topo.Servers) > 0
}

// hasMaster reports whether the lock's servers have a master a fault can
// aim at (MasterTarget): a Sentinel group's Redis master, or a Redis
// Cluster's master of the lock key's slot. A quorum has a leader instead.
func hasMaster(topo Topology) bool {
	return slices.ContainsFunc(topo.Servers, func(s Server) bool { return rolesOf(s.Kind).Elected == "master" })
}

// rolesOf is what a server of kind is to a fault aimed at a role
// (cluster.ServerKind.Roles); nothing for a kind the lab does not know.
func rolesOf(kind topology.Kind) cluster.Roles {
	k, err := cluster.KindOf(kind)
	if err != nil {
		return cluster.Roles{}
	}
	return k.Roles()
}

// LeaderTarget and FollowerTarget name no server but whichever lock server
// has that role when the fault strikes (an ensemble's leader moves with
// every election); the engine asks the servers (System.ServerWithRole) and
// the history records which node it was.
const (
	LeaderTarget   = "leader"
	FollowerTarget = "follower"
)

// HolderServerTarget names the lock server the holder (the step's Holder,
// stopped at its failpoint) is connected to when the fault strikes, found
// from the holder's own open connections; the history records which. For a
// fault that strikes a client (net-partition-client), it is the link from
// the holder to that one server: the holder is cut off its own server
// alone, and the server stays in its quorum.
const HolderServerTarget = "holder-server"

// Link names the link from a client slot to one lock server, the target
// HolderServerTarget resolves to for a client fault.
func Link(client, server string) string { return client + "@" + server }

// SplitLink parses a Link target.
func SplitLink(target string) (client, server string, ok bool) {
	return strings.Cut(target, "@")
}

// RoleOf returns the role a target aims at, if it is a role target.
func RoleOf(target string) (string, bool) {
	switch target {
	case LeaderTarget, FollowerTarget, MasterTarget, PrimaryTarget:
		return target, true
	}
	return "", false
}

type clientKill struct{}

func (clientKill) Name() string                                 { return ClientKill }
func (clientKill) Applies(spec impls.Spec, topo Topology) error { return clientApplies(spec, topo) }
func (clientKill) Targets(topo Topology) []string               { return clientTargets(topo) }

func (clientKill) Inject(ctx context.Context, sys System, target string) (string, error) {
	slot, err := ClientSlot(target)
	if err != nil {
		return "", err
	}
	p, err := sys.Client(slot)
	if err != nil {
		return "", err
	}
	p.Kill()
	return "SIGKILL", nil
}

func (clientKill) Heal(ctx context.Context, sys System, target string) (string, error) {
	slot, err := ClientSlot(target)
	if err != nil {
		return "", err
	}
	id, err := sys.ReplaceClient(ctx, slot)
	if err != nil {
		return "", fmt.Errorf("replace killed %s: %w", target, err)
	}
	return fmt.Sprintf("new process, client id %d", id), nil
}

type clientPause struct{}

func (clientPause) Name() string                                 { return ClientPause }
func (clientPause) Applies(spec impls.Spec, topo Topology) error { return clientApplies(spec, topo) }
func (clientPause) Targets(topo Topology) []string               { return clientTargets(topo) }

func (clientPause) Inject(ctx context.Context, sys System, target string) (string, error) {
	return "SIGSTOP", signalClient(sys, target, syscall.SIGSTOP)
}

func (clientPause) Heal(ctx context.Context, sys System, target string) (string, error) {
	return "SIGCONT", signalClient(sys, target, syscall.SIGCONT)
}

func signalClient(sys System, target string, sig syscall.Signal) error {
	slot, err := ClientSlot(target)
	if err != nil {
		return err
	}
	p, err := sys.Client(slot)
	if err != nil {
		return err
	}
	if err := p.Signal(sig); err != nil {
		return fmt.Errorf("%v %s: %w", sig, target, err)
	}
	return nil
}

// serverKill crashes a lock server and, at the heal, starts it again on
// the same address, with or without its data directory. (The lab's Redis
// keeps nothing on disk, so for Redis both restarts come back empty; the
// note in the history says so.)
type serverKill struct {
	name     string
	keepData bool
}

func (k serverKill) Name() string { return k.name }
func (k serverKill) Applies(spec impls.Spec, topo Topology) error {
	if err := serverApplies(spec, topo); err != nil {
		return err
	}
	if !k.keepData && topo.Ensemble {
		for _, s := range topo.Servers {
			if why := cluster.NoEmptyRestart(s.Kind); why != "" {
				return errors.New(why)
			}
		}
	}
	return nil
}
func (k serverKill) Targets(topo Topology) []string { return serverTargets(topo) }

func (k serverKill) Inject(ctx context.Context, sys System, target string) (string, error) {
	n, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	// A Redis master with replicas is failed over by its group: the
	// record says what it had written, and (at the heal) what the
	// replica promoted in its place had.
	markRedisStrike(ctx, sys, n)
	if err := n.Kill(); err != nil {
		return "", fmt.Errorf("SIGKILL %s: %w", target, err)
	}
	return "SIGKILL", nil
}

func (k serverKill) Heal(ctx context.Context, sys System, target string) (string, error) {
	n, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	// Before the restart, while the promoted replica is the only master
	// its group has (a Sentinel group's fail-over takes about 1.3 s, well
	// inside the step).
	markPromotedAmong(ctx, sys, n)
	if err := n.Restart(ctx, k.keepData); err != nil {
		return "", fmt.Errorf("restart %s: %w", target, err)
	}
	switch {
	case !k.keepData:
		return "restarted without its data", nil
	case cluster.KeepsNoData(n.Kind):
		return "restarted with its data dir (no persistence: empty)", nil
	}
	return "restarted with its data", nil
}

type serverPause struct{}

func (serverPause) Name() string                                 { return ServerPause }
func (serverPause) Applies(spec impls.Spec, topo Topology) error { return serverApplies(spec, topo) }
func (serverPause) Targets(topo Topology) []string               { return serverTargets(topo) }

func (serverPause) Inject(ctx context.Context, sys System, target string) (string, error) {
	n, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	// A Redis master with replicas paused past down-after is failed over
	// by its group: recorded as a kill's fail-over is.
	markRedisStrike(ctx, sys, n)
	return "SIGSTOP", n.Pause()
}

func (serverPause) Heal(ctx context.Context, sys System, target string) (string, error) {
	n, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	// Before it wakes: the old master, resumed, is a master too until the
	// sentinels demote it.
	markPromotedAmong(ctx, sys, n)
	return "SIGCONT", n.Resume()
}

// clockJump moves a Redis server's wall clock three TTLs ahead, so every
// lease on it expires at once, and back to true time at the heal.
type clockJump struct{}

func (clockJump) Name() string { return ServerClockJump }

// Shape: the lock's servers start under the movable clock.
func (clockJump) Shape(d topology.Declaration) topology.Declaration { return d.WithClockShift() }

func (c clockJump) Applies(spec impls.Spec, topo Topology) error {
	if err := serverApplies(spec, topo); err != nil {
		return err
	}
	if len(c.Targets(topo)) == 0 {
		return errors.New("only Redis servers run with a movable clock (the clockjump shim does not cover the JVM or PostgreSQL)")
	}
	if topo.NoClockShift != "" {
		return errors.New(topo.NoClockShift)
	}
	return nil
}

func (clockJump) Targets(topo Topology) []string {
	var out []string
	for _, s := range topo.Servers {
		if s.ClockShift {
			out = append(out, s.Name)
		}
	}
	return out
}

func (clockJump) Inject(ctx context.Context, sys System, target string) (string, error) {
	n, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	d := 3 * sys.TTL()
	if err := n.JumpClock(d); err != nil {
		return "", err
	}
	return fmt.Sprintf("clock +%v", d), nil
}

func (clockJump) Heal(ctx context.Context, sys System, target string) (string, error) {
	n, err := sys.Server(target)
	if err != nil {
		return "", err
	}
	return "clock back to true time", n.JumpClock(0)
}

// kindTargets reports whether target is one of k's targets in topo, or
// the holder when k strikes clients.
func kindTargets(k Kind, topo Topology, target string) bool {
	if target == HolderTarget {
		return strikesClients(k.Targets(topo))
	}
	return slices.Contains(k.Targets(topo), target)
}
