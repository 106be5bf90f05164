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

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/clockjump"
	"github.com/locklab/locklab/topology"
)

// RedisOptions configures one Redis server.
type RedisOptions struct {
	Name string // defaults to "redis"
	// ReplicaOf makes the node a replica of another node the lab started.
	ReplicaOf *Node
	// AppendOnly turns on the append-only file with fsync on every write, so
	// that a restart that keeps its data comes back with every acknowledged
	// write. Off by default: the lab's Redis keeps nothing across a restart,
	// which is how most lock servers are run and what the restart scenarios test.
	AppendOnly bool
	// ClockShift preloads the clockshift library so JumpClock can move this
	// server's wall clock while it runs.
	ClockShift bool
	// Host runs the server on a host of the lab's own, bound to its address.
	Host *hosts.Host
	// Port, when set, is the port to listen on (fixed by a group's start);
	// zero picks a free one.
	Port int
	// Settings are the topology's declared server settings, by Redis's
	// name for each ("min-replicas-to-write": "1"), given on the command
	// line at every start (topology.Group.Settings).
	Settings map[string]string
	// ClusterNodeTimeout, when set, starts a Redis Cluster member with this
	// node timeout (cluster/rediscluster.go). Its cluster config file sits
	// beside the data dir, so a restart without data keeps the node's
	// identity and it rejoins its cluster, as a real member's disk would.
	ClusterNodeTimeout time.Duration
}

// StartRedis starts one redis-server on a free loopback port and waits until
// it answers PING.
func StartRedis(ctx context.Context, opts RedisOptions) (*Node, error) {
	if ContainerMode() {
		if err := redisSettingsInContainers(opts.Settings); err != nil {
			return nil, fmt.Errorf("%s: %w", opts.Name, err)
		}
		return startRedisContainer(ctx, opts)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, missing("redis-server", "redis-server")
	}
	if opts.Name == "" {
		opts.Name = "redis"
	}
	bind, port, err := listenOn(opts.Host, opts.Port)
	if err != nil {
		return nil, err
	}
	dir, err := newNodeDir(opts.Name)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: KindRedis, Name: opts.Name, Addr: net.JoinHostPort(bind, strconv.Itoa(port)), Dir: dir, Host: opts.Host}
	var env []string
	if opts.ClockShift {
		n.clockFile = filepath.Join(dir, "clock-offset")
		if env, err = clockjump.Env(n.clockFile); err != nil {
			n.Stop()
			return nil, err
		}
	}
	conf := redisConfig(bind, port, filepath.Join(dir, "data"), opts)
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		if err := os.MkdirAll(filepath.Join(n.Dir, "data"), 0o755); err != nil {
			return nil, err
		}
		// The config file is written at the first start only, and every
		// restart reads it back: Sentinel rewrites it (CONFIG REWRITE)
		// when it makes the server a master or points it at another one,
		// so a server restarts in the role it last had, as one with a
		// config file on disk does in production. Given on the command
		// line instead, a promoted replica restarted as a replica of the
		// old master, which was by then its own replica: no master at all
		// until Sentinel noticed (seen: explore's acked-replica-lost on a
		// promoted master, healed in 186 ms, stuck 5 s after the heal).
		path := filepath.Join(n.Dir, "redis.conf")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
				return nil, fmt.Errorf("write %s: %w", path, err)
			}
		}
		cmd := exec.Command(bin, path)
		cmd.Env = append(os.Environ(), env...)
		return n.spawnLogged(cmd)
	}
	n.ready = redisReady
	wipe := func(n *Node) error { return os.RemoveAll(filepath.Join(n.Dir, "data")) }
	if err := n.startProcess(ctx, launch, wipe); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// redisDirectives are the settings every Redis the lab starts runs with,
// one directive and its arguments each, in one list for both the config
// file a local server reads (redisConfig) and a container's command line
// (startRedisContainer): no persistence but what AppendOnly asks for, no
// protected mode (the clients come from other hosts), room for the
// matrix's clients. replicaOf is the master's host and port, or nil.
func redisDirectives(bind string, port int, dir string, appendOnly bool, replicaOf []string) [][]string {
	ds := [][]string{
		{"bind", bind},
		{"port", strconv.Itoa(port)},
		{"dir", dir},
		{"daemonize", "no"},
		{"save", ""},
		{"protected-mode", "no"},
		{"maxclients", "10000"},
	}
	if appendOnly {
		ds = append(ds, []string{"appendonly", "yes"}, []string{"appendfsync", "always"})
	} else {
		ds = append(ds, []string{"appendonly", "no"})
	}
	if replicaOf != nil {
		ds = append(ds, append([]string{"replicaof"}, replicaOf...))
	}
	return ds
}

// redisConfig is a local server's config file: redisDirectives, then a
// cluster node's and the topology's settings, one directive a line as
// redis.conf has them, each argument quoted (Redis reads a quoted string
// as its content; an empty one, save's, must be quoted).
func redisConfig(bind string, port int, data string, opts RedisOptions) string {
	var replicaOf []string
	if opts.ReplicaOf != nil {
		host, p, _ := splitHostPort(opts.ReplicaOf.Addr)
		replicaOf = []string{host, p}
	}
	ds := redisDirectives(bind, port, data, opts.AppendOnly, replicaOf)
	if opts.ClusterNodeTimeout > 0 {
		ds = append(ds, []string{"cluster-enabled", "yes"},
			[]string{"cluster-config-file", filepath.Join(filepath.Dir(data), "nodes.conf")},
			[]string{"cluster-node-timeout", strconv.FormatInt(opts.ClusterNodeTimeout.Milliseconds(), 10)})
	}
	var lines []string
	for _, d := range ds {
		line := d[0]
		for _, arg := range d[1:] {
			line += " " + strconv.Quote(arg)
		}
		lines = append(lines, line)
	}
	lines = append(lines, settingsArgs(opts.Settings, "", " ")...)
	return strings.Join(lines, "\n") + "\n"
}

// redisReady is the readiness probe: the server on n's address answers,
// and, for a process of this machine, it is the one started for n. A port
// handed to two servers once let a sentinel that had failed to bind pass
// its probe on its neighbour's answer.
func redisReady(ctx context.Context, n *Node) error {
	c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1, Dialer: n.dialer()})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return err
	}
	want := n.processPID()
	if want == 0 {
		return nil
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return err
	}
	if got := infoFields(info)["process_id"]; got != strconv.Itoa(want) {
		return fmt.Errorf("%s is answered by process %s, not by %d started for %s", n.Addr, got, want, n.Name)
	}
	return nil
}

func splitHostPort(addr string) (string, string, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("address %q has no port", addr)
}

// redisKind is Redis's home: how the lab starts, asks and counts it.
type redisKind struct{}

func init() { RegisterKind(redisKind{}) }

func (redisKind) Kind() topology.Kind { return topology.Redis }
func (redisKind) Package() string     { return "redis-server" }
func (redisKind) Image() string       { return "redis" }

// Start starts each member as an independent server (or a replica of its
// started master): Redis nodes of a lock group do not know each other.
func (redisKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	return startEach(members, func(m Member) (*Node, error) {
		return StartRedis(ctx, RedisOptions{Name: m.Name, ClockShift: m.ClockShift, Host: m.Host, Port: m.Port, ReplicaOf: m.ReplicaOf,
			Settings: m.Settings})
	})
}

// Ensembles: the lab runs this kind as independent servers only.
func (redisKind) Ensembles() error {
	return errors.New("the lab starts redis as independent servers only")
}

func (redisKind) Endpoint(nodes []*Node) topology.Endpoint {
	return topology.Endpoint{Kind: topology.Redis, Addrs: addrsOf(nodes)}
}

// Role reads INFO replication's role line alone: master or replica
// ("slave"). The rest of the section (offsets, replica lines) is no part of
// a role, so a line there the parser does not know cannot fail it.
func (redisKind) Role(ctx context.Context, n *Node) (string, error) {
	c := adminClient(n)
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return "", fmt.Errorf("INFO replication on %s: %w", n.Name, err)
	}
	role, err := roleOf(infoFields(info))
	if err != nil {
		return "", fmt.Errorf("INFO replication on %s: %w", n.Name, err)
	}
	return role, nil
}

// roleOf reads the role line of INFO replication's fields.
func roleOf(f map[string]string) (string, error) {
	switch f["role"] {
	case "":
		return "", errors.New("no role line")
	case "slave":
		return "replica", nil
	}
	return f["role"], nil
}

// adminClient opens a one-connection client on n for the lab's own
// questions (no retries: a server that does not answer is the answer).
func adminClient(n *Node) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1, PoolSize: 1, Dialer: n.dialer()})
}

// Replication is a Redis server's replication as its INFO replication
// shows it: for a master, the offset of everything it has sent its
// replicas and the offset each replica last acknowledged. A replica
// acknowledges with REPLCONF ACK about once a second, and at once only
// when a WAIT makes the master ask (GETACK), so a master's count of what
// its replicas have can be up to a second old; a WAIT is answered from
// this count.
type Replication struct {
	// Role is master or replica, as Role says.
	Role string
	// Offset is master_repl_offset: the replication stream's length.
	Offset int64
	// ReplicaOffset is a replica's slave_repl_offset: how much of its
	// master's stream it has processed (0 on a master). Read on the
	// replica itself it is exact, where its master's count of it
	// (ReplicaAck.Offset) is up to a second old.
	ReplicaOffset int64
	// PromotedAt is, on a master that followed another before (a promoted
	// replica), the offset at which it stopped following: its
	// second_repl_offset less one. -1 when it never followed one.
	PromotedAt int64
	// Replicas are the replicas the master counts (its slaveN lines).
	// A cut that drops packets silently leaves them here, with their
	// last acknowledgements, until the master notices.
	Replicas []ReplicaAck
}

// ReplicaAck is one replica as its master counts it.
type ReplicaAck struct {
	Addr  string // ip:port, as the replica announced itself
	State string // online once its first sync is done
	// Offset is the replication offset the replica last acknowledged.
	Offset int64
	// Lag is the seconds since that acknowledgement, as the master says.
	Lag int64
}

// AckedBy returns the first replica that has acknowledged offset, as a
// WAIT counts it: an online replica whose acknowledged offset reaches it.
func (r Replication) AckedBy(offset int64) (ReplicaAck, bool) {
	for _, a := range r.Replicas {
		if a.State == "online" && a.Offset >= offset {
			return a, true
		}
	}
	return ReplicaAck{}, false
}

// replicationReporter is a kind whose servers report replication offsets
// (Redis's INFO replication).
type replicationReporter interface {
	Replication(ctx context.Context, n *Node) (Replication, error)
}

// ReplicationWatch reads one server's replication again and again over one
// connection: a wait for a replica's acknowledgement asks every few
// milliseconds, and a connection per question would be most of its work.
type ReplicationWatch struct {
	name string
	c    *redis.Client
}

// ReportsReplication says whether n's kind reports replication offsets
// (a Redis server does; a sentinel, which only watches them, does not).
func ReportsReplication(n *Node) bool {
	k, err := KindOf(n.Kind)
	if err != nil {
		return false
	}
	_, ok := k.(replicationReporter)
	return ok
}

// WatchReplication opens a watch on n, or says that n's kind has no
// replication offsets to report.
func WatchReplication(n *Node) (*ReplicationWatch, error) {
	k, err := KindOf(n.Kind)
	if err != nil {
		return nil, err
	}
	if _, ok := k.(replicationReporter); !ok {
		return nil, fmt.Errorf("%s is a %s server, which reports no replication offsets", n.Name, n.Kind)
	}
	return &ReplicationWatch{name: n.Name, c: adminClient(n)}, nil
}

// Read reads INFO replication once.
func (w *ReplicationWatch) Read(ctx context.Context) (Replication, error) {
	info, err := w.c.Info(ctx, "replication").Result()
	if err != nil {
		return Replication{}, fmt.Errorf("INFO replication on %s: %w", w.name, err)
	}
	r, err := parseReplication(info)
	if err != nil {
		return Replication{}, fmt.Errorf("INFO replication on %s: %w", w.name, err)
	}
	return r, nil
}

// Close closes the watch's connection.
func (w *ReplicationWatch) Close() error { return w.c.Close() }

// Replication reads INFO replication on n once.
func (redisKind) Replication(ctx context.Context, n *Node) (Replication, error) {
	w := &ReplicationWatch{name: n.Name, c: adminClient(n)}
	defer w.Close()
	return w.Read(ctx)
}

// parseReplication reads INFO replication's role, master_repl_offset and
// slaveN lines (slave0:ip=10.0.0.3,port=6379,state=online,offset=42,lag=0).
func parseReplication(info string) (Replication, error) {
	f := infoFields(info)
	role, err := roleOf(f)
	if err != nil {
		return Replication{}, err
	}
	r := Replication{Role: role}
	off, err := strconv.ParseInt(f["master_repl_offset"], 10, 64)
	if err != nil {
		return r, fmt.Errorf("master_repl_offset %q: %w", f["master_repl_offset"], err)
	}
	r.Offset = off
	r.PromotedAt = -1
	if v, ok := f["second_repl_offset"]; ok {
		second, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return r, fmt.Errorf("second_repl_offset %q: %w", v, err)
		}
		if second > 0 {
			r.PromotedAt = second - 1
		}
	}
	if v, ok := f["slave_repl_offset"]; ok && role == "replica" {
		if r.ReplicaOffset, err = strconv.ParseInt(v, 10, 64); err != nil {
			return r, fmt.Errorf("slave_repl_offset %q: %w", v, err)
		}
	}
	// slaveN lines come numbered from 0; Redis renumbers them as replicas
	// come and go, so they are read in order until one is missing.
	for i := 0; ; i++ {
		line, ok := f[fmt.Sprintf("slave%d", i)]
		if !ok {
			break
		}
		a, err := parseReplicaAck(line)
		if err != nil {
			return r, fmt.Errorf("slave%d: %w", i, err)
		}
		r.Replicas = append(r.Replicas, a)
	}
	return r, nil
}

// parseReplicaAck reads one slaveN line's comma-separated fields.
func parseReplicaAck(line string) (ReplicaAck, error) {
	kv := map[string]string{}
	for _, field := range strings.Split(line, ",") {
		if k, v, ok := strings.Cut(field, "="); ok {
			kv[k] = v
		}
	}
	var a ReplicaAck
	var err error
	if a.Offset, err = strconv.ParseInt(kv["offset"], 10, 64); err != nil {
		return a, fmt.Errorf("offset %q: %w", kv["offset"], err)
	}
	if a.Lag, err = strconv.ParseInt(kv["lag"], 10, 64); err != nil {
		return a, fmt.Errorf("lag %q: %w", kv["lag"], err)
	}
	a.Addr, a.State = net.JoinHostPort(kv["ip"], kv["port"]), kv["state"]
	return a, nil
}

func (redisKind) Cheapest() string { return "PING" }

// OpenCheapest opens a client with the locks' settings that matter to a
// round trip (no retries, one connection per request in flight).
func (redisKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	switch ep.Via {
	case "sentinel":
		return sentinelKind{}.OpenCheapest(ctx, ep)
	case "cluster":
		return redisClusterKind{}.OpenCheapest(ctx, ep)
	}
	if len(ep.Addrs) == 0 {
		return nil, nil, errors.New("no Redis address to measure")
	}
	rdb := redis.NewClient(&redis.Options{Addr: ep.Addrs[0], MaxRetries: -1, DialerRetries: 1, PoolSize: 4})
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, func() { rdb.Close() }, nil
}

func (redisKind) CostUnit() string { return "Redis commands" }

func (redisKind) ServedAtSessionEnd() bool { return false }

// Served sums INFO commandstats over the servers a lock's requests land
// on (lockServers).
func (redisKind) Served(ctx context.Context, ep topology.Endpoint, _ bool) (float64, error) {
	st, err := lockCommands(ctx, ep)
	return st.calls, err
}

// CommandCounts is INFO commandstats' calls, command by command, over the
// servers a lock's requests land on (lockServers).
func (redisKind) CommandCounts(ctx context.Context, ep topology.Endpoint) (map[string]float64, error) {
	st, err := lockCommands(ctx, ep)
	return st.byCommand, err
}

// CommandTime sums the time the servers a lock's requests land on spent
// running commands (INFO commandstats usec, a script's own commands
// included), connection set-up and replication left out.
func (redisKind) CommandTime(ctx context.Context, ep topology.Endpoint) (time.Duration, error) {
	st, err := lockCommands(ctx, ep)
	return time.Duration(st.usec * float64(time.Microsecond)), err
}

// lockServers are the Redis servers a lock's requests land on: the master
// the sentinels name now (not the sentinels, nor the replicas, whose
// commands are the master's, replicated), a Redis Cluster's masters, or
// every lock node.
func lockServers(ctx context.Context, ep topology.Endpoint) ([]string, error) {
	switch ep.Via {
	case "sentinel":
		addr, err := RedisAddr(ctx, ep)
		if err != nil {
			return nil, err
		}
		return []string{addr}, nil
	case "cluster":
		return clusterMasters(ctx, ep)
	}
	return ep.Addrs, nil
}

// lockCommands sums redisCommands over lockServers.
func lockCommands(ctx context.Context, ep topology.Endpoint) (commandStats, error) {
	addrs, err := lockServers(ctx, ep)
	if err != nil {
		return commandStats{}, err
	}
	total := commandStats{byCommand: map[string]float64{}}
	for _, addr := range addrs {
		st, err := redisCommands(ctx, addr)
		if err != nil {
			return commandStats{}, err
		}
		total.calls += st.calls
		total.usec += st.usec
		for cmd, n := range st.byCommand {
			total.byCommand[cmd] += n
		}
	}
	return total, nil
}

// connectionCommands are what a Redis client sends when it opens a
// connection (and what the counters are read with), and what a replica
// sends its master (a REPLCONF ACK every second): set-up and replication,
// not locking.
var connectionCommands = map[string]bool{"hello": true, "info": true, "select": true, "auth": true, "ping": true,
	"replconf": true, "psync": true, "sync": true}

// commandStats are a server's cumulative calls and µs spent in them, and
// its calls command by command.
type commandStats struct {
	calls, usec float64
	byCommand   map[string]float64
}

// redisCommands sums the calls of every command in INFO commandstats but
// the connection set-up ones, and the µs spent in them.
func redisCommands(ctx context.Context, addr string) (commandStats, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	defer rdb.Close()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return commandStats{}, fmt.Errorf("INFO commandstats on %s: %w", addr, err)
	}
	total := commandStats{byCommand: map[string]float64{}}
	for _, line := range strings.Split(info, "\n") {
		// cmdstat_set:calls=12,usec=34,...
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		cmd := strings.TrimPrefix(name, "cmdstat_")
		// A cluster client's CLUSTER SLOTS (its view of the slots) is
		// routing, not locking.
		if connectionCommands[cmd] || strings.HasPrefix(cmd, "client|") || strings.HasPrefix(cmd, "cluster|") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			var sum *float64
			var v string
			if c, ok := strings.CutPrefix(f, "calls="); ok {
				sum, v = &total.calls, c
			} else if u, ok := strings.CutPrefix(f, "usec="); ok {
				sum, v = &total.usec, u
			} else {
				continue
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return commandStats{}, fmt.Errorf("INFO commandstats on %s: bad line %q", addr, line)
			}
			*sum += n
			if sum == &total.calls {
				total.byCommand[cmd] += n
			}
		}
	}
	return total, nil
}

// Describe reads the version and persistence settings of the Redis server
// a client of ep talks to (the master, via Sentinel), and how many lock
// nodes the endpoint has: one system via Sentinel, every address else.
func (redisKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	addr, err := RedisAddr(ctx, ep)
	if err != nil {
		return Description{}, err
	}
	d, err := describeRedis(ctx, addr)
	if err != nil {
		return Description{}, err
	}
	nodes := len(ep.Addrs)
	if ep.Via == "sentinel" {
		nodes = 1
	}
	d.Settings["lock nodes"] = strconv.Itoa(nodes)
	return d, nil
}

// describeRedis reads one Redis server's version (INFO server) and the
// settings that decide what a write costs it (appendonly, appendfsync,
// save); a setting the server refuses to show is left out.
func describeRedis(ctx context.Context, addr string) (Description, error) {
	d := Description{Settings: map[string]string{}}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	defer rdb.Close()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return Description{}, fmt.Errorf("INFO server: %w", err)
	}
	d.Version = infoFields(info)["redis_version"]
	for _, k := range []string{"appendonly", "appendfsync", "save"} {
		if v, err := rdb.ConfigGet(ctx, k).Result(); err == nil {
			d.Settings[k] = fmt.Sprintf("%q", v[k])
		}
	}
	return d, nil
}

// OwnServers: a user's Redis servers are independent lock nodes, of which
// a lock takes as many as it needs.
func (redisKind) OwnServers() OwnServers {
	return OwnServers{Flag: "redis", Env: "LOCKLAB_REDIS_ADDRS", Independent: true,
		Usage: "comma-separated independent Redis lock nodes (default: start them)"}
}

// RoundTripCounter: Redis's counters (INFO commandstats,
// total_commands_processed) also count every command a Lua script calls,
// which costs no round trip; MONITOR marks those with "lua", so the
// benchmark counts the feed.
func (redisKind) RoundTripCounter() string {
	return "Redis MONITOR: client commands, script-called ones left out"
}

// ClockShift: Redis reads the wall clock through the calls the shim
// moves (faults/clockjump).
func (redisKind) ClockShift() error { return nil }

// HolderPartition: a lock on one Redis server is cut off it by
// holder-partition; a lock over several independent nodes (Redlock) is
// cut off some of them by redlock-partition instead.
func (redisKind) HolderPartition(nodes int) error {
	if nodes == 1 {
		return nil
	}
	return errors.New("a lock over several independent Redis nodes is cut off some of them by redlock-partition, not off one server")
}

// SilentClient: the lab's Redis locks are keys with an expiry of their
// own, bound to no connection: a cut holder's key expires by it however
// long the cut lasts, as holder-partition shows.
func (redisKind) SilentClient(map[string]string) error { return errRedisNoSession }

// errRedisNoSession is why a longer cut shows nothing more on Redis.
var errRedisNoSession = errors.New("a Redis lock is a key with an expiry of its own, bound to no session: holder-partition's cut already outlasts it")

// SingleServerFaults: the faults on a lock's one server are shown and
// reviewed on a lock on one Redis node; a lock over several is faulted by
// the Redlock scenarios instead.
func (redisKind) SingleServerFaults(nodes int) error {
	if nodes == 1 {
		return nil
	}
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: a lone Redis server is the holder's one server; the
// lab's fault on it is aimed by name.
func (redisKind) OneServerSession() error { return nil }

// Roles: a lone Redis server keeps its role; the lab's scripted
// fail-over promotes its replica.
func (redisKind) Roles() Roles { return Roles{} }

// PromoteReplica makes a Redis replica a master (REPLICAOF NO ONE) and
// writes that into its config file (CONFIG REWRITE), as Sentinel does,
// so a later restart brings it back a master; through the lab's control
// path to it (never cut by a fault). A server in a container runs on
// its command line, with no file to rewrite, and restarts in the role
// that line gives it.
func (redisKind) PromoteReplica(ctx context.Context, replica *Node) error {
	c := redis.NewClient(&redis.Options{Addr: replica.Addr, Dialer: replica.dialer(), MaxRetries: -1})
	defer c.Close()
	if err := c.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("promote %s: %w", replica.Name, err)
	}
	if ContainerMode() {
		return nil
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		return fmt.Errorf("promote %s: write its role into its config: %w", replica.Name, err)
	}
	return nil
}

// WakeUpRequest: one client's RPUSH reaching another's blocked BLPOP, the
// cheapest hand-off between two clients through Redis (redis-fair's
// release pushes onto the list its waiter sleeps on).
func (redisKind) WakeUpRequest() string { return "RPUSH → BLPOP" }

// IndependentNodes: independent Redis lock nodes, each its own system; a
// Sentinel group's or a cluster's members are one system reached through
// one way in (the endpoint's Via), so they count as one.
func (redisKind) IndependentNodes(ep topology.Endpoint) int {
	if ep.Via != "" {
		return 1
	}
	return len(ep.Addrs)
}

// KeepsNoData: the lab starts Redis with --save "" (no snapshots), so a
// server restarted with its data dir comes back empty, as the nemesis's
// note has always said (a group started with AppendOnly is the exception
// the note does not tell apart).
func (redisKind) KeepsNoData() bool { return true }
