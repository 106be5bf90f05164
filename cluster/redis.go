package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/faults/clockjump"
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
}

// StartRedis starts one redis-server on a free loopback port and waits until
// it answers PING.
func StartRedis(ctx context.Context, opts RedisOptions) (*Node, error) {
	if ContainerMode() {
		return startRedisContainer(ctx, opts)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, missing("redis-server", "redis-server")
	}
	if opts.Name == "" {
		opts.Name = "redis"
	}
	bind, port, err := listen(opts.Host)
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
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		if err := os.MkdirAll(filepath.Join(n.Dir, "data"), 0o755); err != nil {
			return nil, err
		}
		args := []string{
			"--bind", bind,
			"--port", strconv.Itoa(port),
			"--dir", filepath.Join(n.Dir, "data"),
			"--daemonize", "no",
			"--save", "",
			"--protected-mode", "no",
			"--maxclients", "10000",
		}
		if opts.AppendOnly {
			args = append(args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			args = append(args, "--appendonly", "no")
		}
		if opts.ReplicaOf != nil {
			host, p, _ := splitHostPort(opts.ReplicaOf.Addr)
			args = append(args, "--replicaof", host, p)
		}
		cmd := exec.Command(bin, args...)
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

// redisReady is the readiness probe: PING answers.
func redisReady(ctx context.Context, n *Node) error {
	c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1, Dialer: n.dialer()})
	defer c.Close()
	return c.Ping(ctx).Err()
}

func splitHostPort(addr string) (string, string, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("address %q has no port", addr)
}
