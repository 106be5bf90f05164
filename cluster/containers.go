package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/hosts"

	"github.com/locklab/locklab/topology"
)

// Container mode (LOCKLAB_SERVERS=containers): every server the lab needs runs
// as a container of the machine's Docker engine, started through
// testcontainers-go from the lab's own Dockerfiles (package docker); a
// containerServer (containers_server.go) is then the node's backend. Each
// fault means what it means in local mode. A Redis server is killed,
// restarted (data kept or emptied) inside its running container by the
// image's supervisor, so its published port stays up and a restart costs
// what the server's start costs, as a local process's does; another server
// is killed with its container (`docker kill -s KILL`) and started again
// as the same container (data kept) or a new one from the image (data
// gone). A pause is the cgroup freezer (`docker pause`), Disconnect cuts
// the container off its network, and a clock jump is the same clockshift
// shim as in local mode, mounted into the container. The lab's hosts
// (network namespaces) do not apply: hosts.Available says so in container
// mode, and every network fault kind with it.
//
// The engine connection is in containers_engine.go, the images in
// containers_images.go, and the removal of dead runs' leftovers (the lab's
// own, testcontainers' reaper being off) in containers_reaper.go.

// ServersEnv chooses where the lab's servers run: "local" (the default,
// processes on loopback) or "containers".
const ServersEnv = "LOCKLAB_SERVERS"

// Server modes, the values of ServersEnv and of cmd/bench's -servers flag.
const (
	ServersLocal      = "local"
	ServersContainers = "containers"
)

// Labels every container and network of the lab carries.
const (
	labelLab   = "locklab"       // always "1": `docker ps --filter label=locklab` finds them
	labelRun   = "locklab.run"   // the run's id
	labelOwner = "locklab.owner" // "pid:starttime" of the lab process that made it
)

// ErrNoEngine is wrapped by the error container mode returns when no Docker
// engine answers.
var ErrNoEngine = errors.New("no Docker engine answers")

// ParseServers checks a server mode; "" is local.
func ParseServers(s string) (string, error) {
	switch s {
	case "", ServersLocal:
		return ServersLocal, nil
	case ServersContainers:
		return ServersContainers, nil
	}
	return "", fmt.Errorf("unknown server mode %q: want %s or %s", s, ServersLocal, ServersContainers)
}

// ContainerMode reports whether LOCKLAB_SERVERS asks for containers.
func ContainerMode() bool { return os.Getenv(ServersEnv) == ServersContainers }

// ClockShiftAvailable says why a server's clock cannot be moved here (nil
// when it can): in container mode the clock shim and its offset file are
// mounted from this machine's file system, which an engine on another
// machine (DOCKER_HOST over tcp or ssh) does not see. The start of such a
// server fails too (checkClockShift); this lets a clock fault say so
// before any run.
func ClockShiftAvailable() error {
	if !ContainerMode() {
		return nil
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && !strings.HasPrefix(h, "unix://") {
		return fmt.Errorf("clock jumps need a Docker engine on this machine (the clock shim is mounted from its file system), and DOCKER_HOST=%s is another's; run clock faults with %s=%s", h, ServersEnv, ServersLocal)
	}
	return nil
}

// startRedisContainer is StartRedis in container mode.
func startRedisContainer(ctx context.Context, opts RedisOptions) (*Node, error) {
	if opts.Name == "" {
		opts.Name = "redis"
	}
	if err := containerCannot(opts.Name, opts.Host); err != nil {
		return nil, err
	}
	var cmd []string
	if opts.AppendOnly || opts.ReplicaOf != nil {
		var replicaOf []string
		if opts.ReplicaOf != nil {
			master, ok := opts.ReplicaOf.server.(*containerServer)
			if !ok {
				return nil, fmt.Errorf("%s: a replica in container mode needs a master in a container", opts.Name)
			}
			replicaOf = []string{master.name, "6379"}
		}
		cmd = []string{"redis-server"}
		for _, d := range redisDirectives("0.0.0.0", 6379, "/data", opts.AppendOnly, replicaOf) {
			cmd = append(cmd, "--"+d[0])
			cmd = append(cmd, d[1:]...)
		}
	}
	n, err := startContainer(ctx, containerSpec{kind: KindRedis, name: opts.Name, server: "redis", port: 6379, cmd: cmd, ready: redisReady, clockShift: opts.ClockShift, supervised: true, command: "redis-server"})
	if err != nil || !opts.ClockShift {
		return n, err
	}
	if err := checkClockShift(ctx, n); err != nil {
		n.Stop()
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return n, nil
}

// checkClockShift makes sure a clock jump reaches the server: it moves the
// clock an hour ahead, waits until Redis's TIME shows it, and moves it back.
// The shim and its offset file are mounted from this machine, which only a
// local engine sees; on another the preload is silently ignored (ld.so only
// warns), and every clock jump would then be a fault that never landed.
func checkClockShift(ctx context.Context, n *Node) error {
	const ahead = time.Hour
	if err := n.JumpClock(ahead); err != nil {
		return err
	}
	c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		t, err := c.Time(ctx).Result()
		if err == nil && time.Until(t) > ahead/2 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("clock jumps do not reach the server in its container (TIME %v, %v): the clock shim is mounted from this machine's file system, so it needs a local Docker engine; run clock faults with %s=%s", t, err, ServersEnv, ServersLocal)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := n.JumpClock(0); err != nil {
		return err
	}
	for {
		t, err := c.Time(ctx).Result()
		if err == nil && time.Until(t) < ahead/2 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server's clock did not come back from the check's jump (TIME %v, %v)", t, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startZooKeeperContainer is StartZooKeeper in container mode.
func startZooKeeperContainer(ctx context.Context, opts ZooKeeperOptions) (*Node, error) {
	if opts.Name == "" {
		opts.Name = "zookeeper"
	}
	if opts.TickTime <= 0 {
		t, err := profileMillis(opts.Settings, topology.ZooKeeper, "tickTime")
		if err != nil {
			return nil, err
		}
		opts.TickTime = t
	}
	if err := containerCannot(opts.Name, opts.Host); err != nil {
		return nil, err
	}
	env := map[string]string{"ZOO_TICK_MS": strconv.FormatInt(opts.TickTime.Milliseconds(), 10)}
	if opts.ID > 0 {
		env["ZOO_MY_ID"] = strconv.Itoa(opts.ID)
		env["ZOO_SERVERS"] = strings.Join(opts.Ensemble, " ")
	}
	return startContainer(ctx, containerSpec{kind: KindZooKeeper, name: opts.Name, server: "zookeeper", port: 2181, env: env,
		alias: opts.Alias, ready: zooKeeperReady})
}

// startZooKeeperEnsembleContainers starts an ensemble's members as
// containers on the run's network. Each member's line names the others by
// a network alias fixed before any starts, unique to this ensemble (a
// process may run several), and the image's own quorum and election ports,
// which no other container shares.
func startZooKeeperEnsembleContainers(ctx context.Context, members []Member) ([]*Node, error) {
	containerSeq.Lock()
	containerSeq.n++
	group := fmt.Sprintf("zk%d", containerSeq.n)
	containerSeq.Unlock()
	alias := func(m Member) string { return group + "-" + m.Name }
	var lines []string
	for i, m := range members {
		lines = append(lines, fmt.Sprintf("server.%d=%s:2888:3888", i+1, alias(m)))
	}
	return startTogether(members, func(i int, m Member) (*Node, error) {
		return StartZooKeeper(ctx, ZooKeeperOptions{Name: m.Name, TickTime: m.TickTime, Host: m.Host,
			ID: i + 1, Ensemble: lines, Alias: alias(m), Settings: m.Settings})
	})
}

// startPostgresContainer is StartPostgres in container mode.
func startPostgresContainer(ctx context.Context, opts PostgresOptions) (*Node, error) {
	if opts.Name == "" {
		opts.Name = "postgres"
	}
	if err := containerCannot(opts.Name, opts.Host); err != nil {
		return nil, err
	}
	// The image's data dir (made when it was built) and the same command
	// line as a local server's, the topology's settings last.
	cmd := append([]string{"postgres"}, postgresArgs("/var/lib/locklab-pg/data", "*", 5432, "/tmp", opts.Settings)...)
	return startContainer(ctx, containerSpec{kind: KindPostgres, name: opts.Name, server: "postgres", port: 5432, cmd: cmd, ready: postgresReady})
}

// containerCannot names what container mode does not do.
func containerCannot(name string, h *hosts.Host) error {
	if h != nil {
		return fmt.Errorf("%s: %w", name, errHostsInContainers)
	}
	return nil
}
