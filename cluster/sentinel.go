package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/topology"
)

// SentinelMaster is the name of the master group the lab's sentinels
// monitor: what a client gives Sentinel to be told the master's address.
const SentinelMaster = "locklab"

// The fast profile's Sentinel timing (topology.Fast; the run's profile
// gives the member its own), chosen against the lab's 1 s lease:
//
//   - down-after 500 ms: a sentinel calls the master down after half a
//     lease without a valid reply, so a master cut off past a lease (the
//     fixed faults last 3 s and more) is failed over while the fault lasts,
//     and the old master's isolated side and the new master overlap, which
//     is the window the lab is there to see. Shorter would fail over on a
//     loaded machine's hiccups (two shared cores under nice).
//   - failover-timeout 2 s: a fail-over that stalls (a sentinel elected
//     leader and then cut off) is given up and retried by another sentinel
//     within a run (Sentinel waits twice this between attempts on one
//     master), instead of the default three minutes.
//
// Quorum 2 of 3: two sentinels must agree the master is down, and a
// majority of the three must elect the one that fails it over, so one
// isolated sentinel can neither fail over nor stop a fail-over.
//
// The production profile gives Sentinel's defaults, 30 s and 3 minutes.
const sentinelQuorum = 2

// StartSentinel starts one Redis Sentinel on m's address, monitoring
// master as SentinelMaster, and waits until it answers PING. Sentinel
// rewrites its config file as it learns the group, so each gets its own.
func StartSentinel(ctx context.Context, m Member, master *Node) (*Node, error) {
	if ContainerMode() {
		return nil, (sentinelKind{}).Ensembles()
	}
	// Debian's redis-sentinel is redis-server under another name; a
	// redis-server started with --sentinel is the same program.
	bin, args := "", []string(nil)
	if p, err := exec.LookPath("redis-sentinel"); err == nil {
		bin = p
	} else if p, err := exec.LookPath("redis-server"); err == nil {
		bin, args = p, []string{"--sentinel"}
	} else {
		return nil, missing("redis-sentinel", "redis-sentinel")
	}
	dir, err := newNodeDir(m.Name)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: KindSentinel, Name: m.Name, Addr: m.Addr(), Dir: dir, Host: m.Host}
	mhost, mport, err := splitHostPort(master.Addr)
	if err != nil {
		n.Stop()
		return nil, err
	}
	downAfter, err := profileMillis(m.Settings, topology.Sentinel, "down-after-milliseconds")
	if err != nil {
		n.Stop()
		return nil, err
	}
	failoverTimeout, err := profileMillis(m.Settings, topology.Sentinel, "failover-timeout")
	if err != nil {
		n.Stop()
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf")
	lines := []string{
		"bind " + m.Bind,
		"port " + strconv.Itoa(m.Port),
		"dir " + dir,
		"daemonize no",
		"protected-mode no",
		fmt.Sprintf("sentinel monitor %s %s %s %d", SentinelMaster, mhost, mport, sentinelQuorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", SentinelMaster, downAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", SentinelMaster, failoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", SentinelMaster),
	}
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		n.Stop()
		return nil, err
	}
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		return n.spawnLogged(exec.Command(bin, append([]string{conf}, args...)...))
	}
	n.ready = redisReady
	// Nothing to wipe: a restarted sentinel keeps what it learned, as a
	// real one does from its rewritten config.
	if err := n.startProcess(ctx, launch, func(*Node) error { return nil }); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// sentinelKind is Redis Sentinel's home. Its group is how lock clients
// reach the Redis group it monitors: its Endpoint is a Redis one, via
// sentinel.
type sentinelKind struct{}

func init() { RegisterKind(sentinelKind{}) }

func (sentinelKind) Kind() topology.Kind { return topology.Sentinel }
func (sentinelKind) Package() string     { return "redis-sentinel" }

// Image: the Redis image would do, but container mode starts no sentinel
// (Ensembles).
func (sentinelKind) Image() string { return "redis" }

// Ensembles: the lab starts sentinels as local processes only
// (errSentinelInContainers says why).
func (sentinelKind) Ensembles() error {
	if ContainerMode() {
		return errSentinelInContainers
	}
	return nil
}

// Start starts every sentinel of the group on the master their members
// name (Member.ReplicaOf), then waits until each knows the other
// sentinels and the master's replicas: before that, a master cut off
// would not be failed over (the sentinels find each other through hello
// messages on the master, every two seconds), and a fault would test
// nothing.
func (sentinelKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	if len(members) == 0 || members[0].ReplicaOf == nil {
		return nil, errors.New("sentinels need the master they monitor (ReplicaOf) started before them")
	}
	master := members[0].ReplicaOf
	nodes, err := startEach(members, func(m Member) (*Node, error) { return StartSentinel(ctx, m, master) })
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := waitSentinelsKnown(ctx, nodes); err != nil {
		// About one group start in forty has ended here, cause unknown:
		// each sentinel's own account (its +sentinel and +slave lines, or
		// their absence) is what the next one needs to explain it.
		var logs []string
		for _, n := range nodes {
			logs = append(logs, fmt.Sprintf("--- last lines of %s's log ---\n%s", n.Name, n.LogTail(8)))
		}
		stopNodes(nodes)
		return nil, fmt.Errorf("%w\n%s", err, strings.Join(logs, "\n"))
	}
	st, err := SentinelState(ctx, nodes[0])
	if err == nil {
		err = waitMasterReady(ctx, master, st.Replicas)
	}
	if err != nil {
		stopNodes(nodes)
		return nil, err
	}
	return nodes, nil
}

// waitMasterReady waits until replicas of the master's replicas have
// finished their first sync (state=online) and the master accepts a
// write. Before the first, a WAIT for a replica answers 0 (the benchmark's
// first redis-setnx-px-wait grant was given back so); before the second,
// a master started with min-replicas-to-write (redis-sentinel-min-replicas)
// refuses every write (NOREPLICAS) until its once-a-second count of good
// replicas has seen them (about three seconds after start: the first
// contention run there failed 208 acquires). A run begun before then
// would measure the start, not the lock.
func waitMasterReady(ctx context.Context, master *Node, replicas int) error {
	c := redis.NewClient(&redis.Options{Addr: master.Addr, MaxRetries: -1, DialerRetries: 1, Dialer: master.dialer(),
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	for {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil {
			if online := strings.Count(info, "state=online"); online < replicas {
				err = fmt.Errorf("%d of %d replicas have synced", online, replicas)
			} else {
				err = c.Set(ctx, "locklab:ready", "1", time.Second).Err()
			}
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("master %s not ready: %w", master.Name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitSentinelsKnown waits until every sentinel sees all the others and
// at least one replica, or says what was missing when ctx ends.
func waitSentinelsKnown(ctx context.Context, nodes []*Node) error {
	var last error
	for {
		last = nil
		for _, n := range nodes {
			st, err := SentinelState(ctx, n)
			if err != nil {
				last = err
				break
			}
			if st.OtherSentinels < len(nodes)-1 || st.Replicas < 1 {
				last = fmt.Errorf("%s knows %d other sentinels and %d replicas", n.Name, st.OtherSentinels, st.Replicas)
				break
			}
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sentinels did not find each other: %w", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// SentinelView is what one sentinel says of the master group.
type SentinelView struct {
	Master         string // the master's address, as the sentinel names it
	OtherSentinels int
	Replicas       int
	// DownAfter and FailoverTimeout are the group's settings as this
	// sentinel runs them (down-after-milliseconds, failover-timeout), so
	// a fault waits on the servers' own times, not on a profile's copy.
	DownAfter, FailoverTimeout time.Duration
}

// SentinelState asks sentinel n about SentinelMaster.
func SentinelState(ctx context.Context, n *Node) (SentinelView, error) {
	c := redis.NewSentinelClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1, Dialer: n.dialer(),
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	m, err := c.Master(ctx, SentinelMaster).Result()
	if err != nil {
		return SentinelView{}, fmt.Errorf("SENTINEL MASTER on %s: %w", n.Name, err)
	}
	v := SentinelView{Master: net.JoinHostPort(m["ip"], m["port"])}
	v.OtherSentinels, _ = strconv.Atoi(m["num-other-sentinels"])
	v.Replicas, _ = strconv.Atoi(m["num-slaves"])
	for key, d := range map[string]*time.Duration{"down-after-milliseconds": &v.DownAfter, "failover-timeout": &v.FailoverTimeout} {
		ms, err := strconv.Atoi(m[key])
		if err != nil {
			return SentinelView{}, fmt.Errorf("SENTINEL MASTER on %s: %s %q: %w", n.Name, key, m[key], err)
		}
		*d = time.Duration(ms) * time.Millisecond
	}
	return v, nil
}

// Endpoint: clients are given the sentinels, and ask them for the master.
func (sentinelKind) Endpoint(nodes []*Node) topology.Endpoint {
	return topology.Endpoint{Kind: topology.Redis, Via: "sentinel", Addrs: addrsOf(nodes), Master: SentinelMaster}
}

// Role: a sentinel is a sentinel; the roles faults aim at (master,
// replica) are the Redis servers' own.
func (sentinelKind) Role(ctx context.Context, n *Node) (string, error) {
	if _, err := SentinelState(ctx, n); err != nil {
		return "", err
	}
	return "sentinel", nil
}

func (sentinelKind) Cheapest() string { return "PING" }

// OpenCheapest pings the master the sentinels name, as a lock's client
// reaches it.
func (sentinelKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: ep.Master, SentinelAddrs: ep.Addrs,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 4})
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, func() { rdb.Close() }, nil
}

func (sentinelKind) CostUnit() string { return "Redis commands" }

func (sentinelKind) ServedAtSessionEnd() bool { return false }

// Served counts the master's commands (lockServers); the sentinels' own
// probes are not the lock's cost.
func (sentinelKind) Served(ctx context.Context, ep topology.Endpoint, _ bool) (float64, error) {
	st, err := lockCommands(ctx, ep)
	return st.calls, err
}

// CommandCounts is the master's calls, command by command.
func (sentinelKind) CommandCounts(ctx context.Context, ep topology.Endpoint) (map[string]float64, error) {
	st, err := lockCommands(ctx, ep)
	return st.byCommand, err
}

// RedisAddr is the address of the Redis server a client of ep talks to
// now: ep's first address, or, via Sentinel, the master the first
// sentinel names (for what measures a Redis server itself, as the
// benchmark's wake-up hop does, not through a lock's client).
func RedisAddr(ctx context.Context, ep topology.Endpoint) (string, error) {
	if len(ep.Addrs) == 0 {
		return "", errors.New("no Redis address")
	}
	if ep.Via != "sentinel" {
		return ep.Addrs[0], nil
	}
	c := redis.NewSentinelClient(&redis.Options{Addr: ep.Addrs[0], MaxRetries: -1})
	defer c.Close()
	addr, err := c.GetMasterAddrByName(ctx, ep.Master).Result()
	if err != nil || len(addr) != 2 {
		return "", fmt.Errorf("ask %s for the master: %v", ep.Addrs[0], err)
	}
	return net.JoinHostPort(addr[0], addr[1]), nil
}

// sentinelsAgree is a helper for tests and health: the master address
// every sentinel of nodes names, or an error saying how they differ.
func sentinelsAgree(ctx context.Context, nodes []*Node) (string, error) {
	seen := map[string][]string{}
	for _, n := range nodes {
		v, err := SentinelState(ctx, n)
		if err != nil {
			return "", err
		}
		seen[v.Master] = append(seen[v.Master], n.Name)
	}
	if len(seen) != 1 {
		return "", fmt.Errorf("sentinels disagree on the master: %v", seen)
	}
	for m := range seen {
		return m, nil
	}
	return "", errors.New("no sentinel")
}

// Describe reads the sentinel's own version (INFO server); the Redis
// servers it monitors describe themselves as Redis.
func (sentinelKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	if len(ep.Addrs) == 0 {
		return Description{}, errors.New("no sentinel address")
	}
	return describeRedis(ctx, ep.Addrs[0])
}

// OwnServers: none; a Sentinel group's fail-overs are the scenarios' own
// faults, so the lab starts the group and the Redis servers it monitors.
func (sentinelKind) OwnServers() OwnServers {
	return OwnServers{None: "the lab starts a Sentinel group and the Redis servers it monitors, to fail them over itself"}
}

// RoundTripCounter: a sentinel serves no lock request; a lock's requests
// go to the master it names and are counted there, as Redis's.
func (sentinelKind) RoundTripCounter() string {
	return "none of its own: the master's Redis MONITOR feed"
}

// ClockShift: the lab starts sentinels without the shim; a clock jump
// moves a Redis lock node's clock (topology.WithClockShift).
func (sentinelKind) ClockShift() error {
	return errors.New("the lab starts sentinels without the clock shim; a clock jump moves the Redis servers' clocks")
}

// HolderPartition: a holder cut off a Sentinel group's master is a
// fail-over's scenario (the sentinels promote a replica), reviewed as such.
func (sentinelKind) HolderPartition(int) error {
	return errors.New("a holder cut off a Sentinel group's master is a fail-over scenario's, not holder-partition's")
}

// SilentClient: a lock through a Sentinel group is a Redis lock, a key
// with an expiry of its own.
func (sentinelKind) SilentClient(map[string]string) error { return errRedisNoSession }

// SingleServerFaults: a lock through a Sentinel group is a Redis lock; its faults are the fail-over scenarios'.
func (sentinelKind) SingleServerFaults(int) error {
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: a client of a Sentinel group talks to the master the
// sentinels name, whichever it is.
func (sentinelKind) OneServerSession() error {
	return errors.New("a client of a Sentinel group talks to whichever master the sentinels name")
}

// Roles: the sentinels move the master role among the Redis servers, and
// serve no lock request themselves.
func (sentinelKind) Roles() Roles { return Roles{Elected: "master", Directs: true} }
