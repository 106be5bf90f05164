package cluster

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster/hosts"
)

// ZooKeeperOptions configures a standalone ZooKeeper server.
type ZooKeeperOptions struct {
	Name string // defaults to "zookeeper"
	// TickTime is ZooKeeper's time unit; session timeouts are bounded below by
	// 2 ticks, so a short tick lets tests use sub-second sessions. Default 100ms.
	TickTime time.Duration
	// Host runs the server on a host of the lab's own, bound to its address.
	Host *hosts.Host
}

// zooKeeperJar is where Debian's zookeeper package puts the server; its
// manifest carries the class path of every dependency.
func zooKeeperClassPath() (string, error) {
	if cp := os.Getenv("LOCKLAB_ZOOKEEPER_CLASSPATH"); cp != "" {
		return cp, nil
	}
	jar := "/usr/share/java/zookeeper.jar"
	if _, err := os.Stat(jar); err != nil {
		return "", missing("ZooKeeper ("+jar+")", "zookeeper")
	}
	cp := jar
	// A logging binding, so the server's log says something useful.
	if _, err := os.Stat("/usr/share/java/slf4j-simple.jar"); err == nil {
		cp += ":/usr/share/java/slf4j-simple.jar"
	}
	return cp, nil
}

// StartZooKeeper starts a standalone ZooKeeper server and waits until a real
// client session can read the root node.
func StartZooKeeper(ctx context.Context, opts ZooKeeperOptions) (*Node, error) {
	if ContainerMode() {
		return startZooKeeperContainer(ctx, opts)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, missing("java", "default-jre-headless")
	}
	cp, err := zooKeeperClassPath()
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "zookeeper"
	}
	if opts.TickTime <= 0 {
		opts.TickTime = 100 * time.Millisecond
	}
	bind, port, err := listen(opts.Host)
	if err != nil {
		return nil, err
	}
	dir, err := newNodeDir(opts.Name)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: KindZooKeeper, Name: opts.Name, Addr: net.JoinHostPort(bind, strconv.Itoa(port)), Dir: dir, Host: opts.Host}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	cfg := strings.Join([]string{
		fmt.Sprintf("tickTime=%d", opts.TickTime.Milliseconds()),
		"dataDir=" + filepath.Join(dir, "data"),
		fmt.Sprintf("clientPort=%d", port),
		"clientPortAddress=" + bind,
		"maxClientCnxns=0",
		"admin.enableServer=false",
		"4lw.commands.whitelist=*",
		"globalOutstandingLimit=100000",
		// The default ceiling is 20 ticks (2s at 100ms); scenarios choose
		// the session timeout, so allow up to a minute.
		"maxSessionTimeout=60000",
		// No fsync per write: the lab measures the lock recipe, not the disk.
		"forceSync=no",
		"",
	}, "\n")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		n.Stop()
		return nil, fmt.Errorf("write %s: %w", cfgPath, err)
	}
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		if err := os.MkdirAll(filepath.Join(n.Dir, "data"), 0o755); err != nil {
			return nil, err
		}
		cmd := exec.Command(java,
			"-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dzookeeper.jmx.log4j.disable=true",
			"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
			"-cp", cp, "org.apache.zookeeper.server.ZooKeeperServerMain", cfgPath)
		return n.spawnLogged(cmd)
	}
	n.ready = zooKeeperReady
	wipe := func(n *Node) error { return os.RemoveAll(filepath.Join(n.Dir, "data")) }
	if err := n.startProcess(ctx, launch, wipe); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// zooKeeperReady is the readiness probe: a real session reads the root node.
func zooKeeperReady(ctx context.Context, n *Node) error {
	deadline, _ := ctx.Deadline()
	dial := n.dialer()
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	// First ask the server, with the four-letter word srvr, whether it
	// serves yet: go-zookeeper sleeps a whole second after a refused dial,
	// and a session begun while the server listens but does not serve yet
	// hangs three, so a session opened too early made every start take
	// one to three seconds more than the server needed (the matrix's
	// servers phase read 1.1, 2.1, 3.1 s for ZooKeeper). A "no" here
	// costs the caller's 5 ms poll instead.
	if err := zooKeeperServing(ctx, dial, n.Addr); err != nil {
		return err
	}
	conn, events, err := zk.Connect([]string{n.Addr}, 4*time.Second,
		zk.WithLogger(log.New(io.Discard, "", 0)),
		zk.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return dial(dctx, network, addr)
		}))
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				_, _, err := conn.Exists("/")
				return err
			}
		case <-time.After(time.Until(deadline)):
			return fmt.Errorf("no session within %v", time.Until(deadline))
		}
	}
}

// zooKeeperServing asks the server at addr whether it serves requests
// (the four-letter word srvr names its mode only once it does).
func zooKeeperServing(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr string) error {
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	// Short: a server still starting may accept the connection and never
	// answer it (here 2 s went by unanswered); the next probe asks again.
	deadline := time.Now().Add(250 * time.Millisecond)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "srvr"); err != nil {
		return err
	}
	reply, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	if !strings.Contains(string(reply), "Mode: ") {
		return fmt.Errorf("not serving yet: %q", strings.TrimSpace(string(reply)))
	}
	return nil
}
