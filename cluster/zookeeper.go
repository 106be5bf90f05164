package cluster

import (
	"bufio"
	"context"
	"errors"
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
	"github.com/locklab/locklab/topology"
)

// ZooKeeperOptions configures a standalone ZooKeeper server.
type ZooKeeperOptions struct {
	Name string // defaults to "zookeeper"
	// TickTime is ZooKeeper's time unit; session timeouts are bounded below by
	// 2 ticks, so a short tick lets tests use sub-second sessions. Default:
	// the profile's tickTime (Settings), 100ms under fast.
	TickTime time.Duration
	// Settings are the member's declared settings: the profile's tickTime,
	// initLimit and syncLimit (topology.Profile).
	Settings map[string]string
	// Host runs the server on a host of the lab's own, bound to its address.
	Host *hosts.Host
	// Port, when set, is the client port (fixed by a group's start).
	Port int
	// Ensemble, when set, makes the server member ID of an ensemble whose
	// members' quorum and election addresses it lists ("server.N=..."
	// lines); empty starts a standalone server.
	ID       int
	Ensemble []string
	// Alias, in container mode, is the name the other members of the
	// ensemble reach this one by on the run's network (its Ensemble line
	// names it), fixed before any member starts.
	Alias string
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
		if opts.TickTime, err = profileMillis(opts.Settings, topology.ZooKeeper, "tickTime"); err != nil {
			return nil, err
		}
	}
	bind, port, err := listenOn(opts.Host, opts.Port)
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
	if len(opts.Ensemble) > 0 {
		// A follower must connect and sync within initLimit ticks and stay
		// within syncLimit of the leader: the profile's (2s and 1s at the
		// fast profile's tick, 20s and 10s under production).
		cfg += fmt.Sprintf("initLimit=%s\nsyncLimit=%s\n", profileSetting(opts.Settings, topology.ZooKeeper, "initLimit"),
			profileSetting(opts.Settings, topology.ZooKeeper, "syncLimit")) + strings.Join(opts.Ensemble, "\n") + "\n"
	}
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		n.Stop()
		return nil, fmt.Errorf("write %s: %w", cfgPath, err)
	}
	// ZooKeeperServerMain runs one server standalone whatever its config
	// says (three of them would be three lock services, each granting its
	// own locks); QuorumPeerMain joins the ensemble its lines declare.
	main := "org.apache.zookeeper.server.ZooKeeperServerMain"
	if len(opts.Ensemble) > 0 {
		main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	}
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		if err := os.MkdirAll(filepath.Join(n.Dir, "data"), 0o755); err != nil {
			return nil, err
		}
		if opts.ID > 0 {
			// A member finds its own line of the ensemble by its id.
			if err := os.WriteFile(filepath.Join(n.Dir, "data", "myid"), []byte(strconv.Itoa(opts.ID)), 0o644); err != nil {
				return nil, err
			}
		}
		cmd := exec.Command(java,
			"-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dzookeeper.jmx.log4j.disable=true",
			"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
			"-cp", cp, main, cfgPath)
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

// zooKeeperKind is ZooKeeper's home: a standalone server, or an ensemble
// whose members start together knowing each other's quorum addresses.
type zooKeeperKind struct{}

func init() { RegisterKind(zooKeeperKind{}) }

func (zooKeeperKind) Kind() topology.Kind { return topology.ZooKeeper }
func (zooKeeperKind) Package() string     { return "zookeeper" }
func (zooKeeperKind) Image() string       { return "zookeeper" }

// Start starts a standalone server, or every member of an ensemble at
// once: a member serves only once a quorum formed, so starting them one
// after another would wait forever on the first.
func (zooKeeperKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	if len(members) == 1 && !members[0].Ensemble {
		m := members[0]
		n, err := StartZooKeeper(ctx, ZooKeeperOptions{Name: m.Name, TickTime: m.TickTime, Host: m.Host, Port: m.Port, Settings: m.Settings})
		if err != nil {
			return nil, err
		}
		return []*Node{n}, nil
	}
	if err := (zooKeeperKind{}).Ensembles(); err != nil {
		return nil, fmt.Errorf("%s: %w", members[0].Group, err)
	}
	if ContainerMode() {
		return startZooKeeperEnsembleContainers(ctx, members)
	}
	var lines []string
	for i := range members {
		m := &members[i]
		q, err := m.PortFor("quorum")
		if err != nil {
			return nil, err
		}
		e, err := m.PortFor("election")
		if err != nil {
			return nil, err
		}
		lines = append(lines, fmt.Sprintf("server.%d=%s:%d:%d", i+1, m.Bind, q, e))
	}
	return startTogether(members, func(i int, m Member) (*Node, error) {
		return StartZooKeeper(ctx, ZooKeeperOptions{Name: m.Name, TickTime: m.TickTime,
			Host: m.Host, Port: m.Port, ID: i + 1, Ensemble: lines, Settings: m.Settings})
	})
}

// Ensembles: ZooKeeper starts as an ensemble in local and in container
// mode.
func (zooKeeperKind) Ensembles() error { return nil }

func (zooKeeperKind) Endpoint(nodes []*Node) topology.Endpoint {
	return topology.Endpoint{Kind: topology.ZooKeeper, Addrs: addrsOf(nodes)}
}

// Role reads the Mode line of the srvr four-letter word: leader, follower
// or standalone.
func (zooKeeperKind) Role(ctx context.Context, n *Node) (string, error) {
	m, err := FourLetterWord(ctx, n.dialer(), n.Addr, "srvr")
	if err != nil {
		return "", err
	}
	mode, ok := m["Mode"]
	if !ok {
		return "", fmt.Errorf("srvr on %s has no Mode line (is it serving?)", n.Name)
	}
	return mode, nil
}

// Cheapest is a write, not a read, as etcd's is. Every grant of a
// ZooKeeper lock creates a znode, and a write goes through the leader and
// is logged by a quorum before it is answered, on one server as on an
// ensemble; a read (exists, getData) is answered by whichever server the
// client is connected to, alone, and would put the bound of every lock
// above what any grant can reach (on an ensemble, far above).
func (zooKeeperKind) Cheapest() string { return "setData (one write through the leader)" }

// limitNode is the znode the limit's writes go to.
const limitNode = "/locklab-limit"

func (zooKeeperKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	conn, err := dialZK(ctx, ep.Addrs, 4*time.Second)
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.Create(limitNode, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		conn.Close()
		return nil, nil, fmt.Errorf("create %s for the limit: %w", limitNode, err)
	}
	data := []byte("x")
	return func(context.Context) error {
		_, err := conn.Set(limitNode, data, -1)
		return err
	}, conn.Close, nil
}

func (zooKeeperKind) CostUnit() string { return "ZooKeeper requests" }

func (zooKeeperKind) ServedAtSessionEnd() bool { return false }

// Served sums mntr's zk_packets_received over the members.
func (zooKeeperKind) Served(ctx context.Context, ep topology.Endpoint, _ bool) (float64, error) {
	var total float64
	for _, addr := range ep.Addrs {
		m, err := FourLetterWord(ctx, nil, addr, "mntr")
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(m["zk_packets_received"], 64)
		if err != nil {
			return 0, fmt.Errorf("mntr on %s has no zk_packets_received: %w", addr, err)
		}
		total += v
	}
	return total, nil
}

// dialZK opens a ZooKeeper session and waits until it is established, so
// that the session set-up is not part of any measurement.
func dialZK(ctx context.Context, addrs []string, timeout time.Duration) (*zk.Conn, error) {
	conn, events, err := zk.Connect(addrs, timeout, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper: %w", err)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
		case <-deadline.C:
			conn.Close()
			return nil, fmt.Errorf("ZooKeeper session not established within 10s")
		case <-ctx.Done():
			conn.Close()
			return nil, ctx.Err()
		}
	}
}

// FourLetterWord sends a ZooKeeper four-letter word over a raw TCP
// connection (through dial, nil: the default dialer) and parses the tab- or
// colon-separated reply.
func FourLetterWord(ctx context.Context, dial Dialer, addr, word string) (map[string]string, error) {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := dial(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", word, addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(word)); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", word, addr, err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			k, v, ok = strings.Cut(line, ": ")
		}
		if ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", word, addr, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s on %s: empty reply (is the word whitelisted?)", word, addr)
	}
	return out, nil
}

// Describe asks the first server's srvr four-letter word for its version
// and mode. The settings the lab starts it with that no four-letter word
// reports are the lab's (startZooKeeper above).
func (zooKeeperKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	if len(ep.Addrs) == 0 {
		return Description{}, errors.New("no ZooKeeper address")
	}
	m, err := FourLetterWord(ctx, nil, ep.Addrs[0], "srvr")
	if err != nil {
		return Description{}, err
	}
	return Description{Version: m["Zookeeper version"], Settings: map[string]string{"mode": m["Mode"]},
		LabSettings: map[string]string{"forceSync": "no (cluster/zookeeper.go)", "tickTime": topology.Setting(topology.ZooKeeper, "tickTime") + "ms (the fast profile, topology/profile.go)"}}, nil
}

// OwnServers: a user's ZooKeeper servers are one ensemble, reached
// through any of them.
func (zooKeeperKind) OwnServers() OwnServers {
	return OwnServers{Flag: "zk", Env: "LOCKLAB_ZK_ADDRS", Usage: "comma-separated ZooKeeper servers (default: start one)"}
}

// RoundTripCounter: every request a client sends is one packet received.
func (zooKeeperKind) RoundTripCounter() string { return "ZooKeeper mntr zk_packets_received" }

// ClockShift: the JVM reads the clock in ways the shim does not cover.
func (zooKeeperKind) ClockShift() error {
	return errors.New("ZooKeeper's JVM reads the clock in ways the clock shim does not cover")
}

// HolderPartition: a holder cut off its ZooKeeper server loses its
// session there; the lab has shown and reviewed it.
func (zooKeeperKind) HolderPartition(int) error { return nil }

// SilentClient: ZooKeeper expires a session it has heard no ping on for its
// timeout, the lab's TTL, deleting the session's ephemeral nodes.
func (zooKeeperKind) SilentClient(map[string]string) error { return nil }

// SingleServerFaults: the crash between an acquire's steps, the restart
// and the scripted fail-over the single-server scenarios aim at a lock's
// one server are shown and reviewed on a single Redis node's locks only
// (the lab's failpoints between acquire steps are in those locks).
func (zooKeeperKind) SingleServerFaults(int) error {
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: a ZooKeeper session lives on the one member its
// client is connected to.
func (zooKeeperKind) OneServerSession() error { return nil }

// Roles: an ensemble elects a leader.
func (zooKeeperKind) Roles() Roles { return Roles{Elected: "leader"} }
