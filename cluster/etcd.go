package cluster

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// KindEtcd is etcd under the name cluster's code uses for kinds.
const KindEtcd = topology.Etcd

// Raft timing of the fast profile (topology.Fast; the run's profile gives
// each member its own, etcd's defaults 100ms/1s under production). etcd refuses a lease shorter
// than 1.5 election timeouts (rounded up to whole seconds), and the lab's
// TTL is 1s: with etcd's defaults (100ms, 1s) every 1s lease would be
// granted as 2s, so the lab would measure a lock with twice the TTL it
// asked for. 50ms/500ms is the ratio etcd recommends (election timeout
// about ten heartbeats) and gives a 750ms floor, so a 1s lease is 1s.
// Elections are then quick too, which keeps a leader-isolation cell short.
const (
	etcdHeartbeatName = "heartbeat-interval"
	etcdElectionName  = "election-timeout"
)

// EtcdOptions configures one etcd member.
type EtcdOptions struct {
	Name string // defaults to "etcd"
	// Host runs the server on a host of the lab's own, bound to its address.
	Host *hosts.Host
	// Port and PeerPort, when set, are the client and peer ports (fixed by
	// a group's start, so every member's --initial-cluster names them).
	Port, PeerPort int
	// InitialCluster is every member's "name=http://addr:peerport",
	// comma-separated; empty starts a cluster of this member alone.
	InitialCluster string
	// Token names the cluster, so members of two runs never join each
	// other (a leftover member on a reused port would otherwise be taken
	// for a peer).
	Token string
	// Settings are the member's declared settings (the profile's raft
	// timing: heartbeat-interval, election-timeout, in ms).
	Settings map[string]string
}

// etcdBinary finds Debian's etcd (package etcd-server).
func etcdBinary() (string, error) {
	if p := os.Getenv("LOCKLAB_ETCD"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", missing("etcd", "etcd-server")
	}
	return p, nil
}

// StartEtcd starts one etcd member as a local process and returns once it
// answers /health, which in etcd 3.4 means it knows a leader and a quorum
// read went through: a member of a cluster is ready only once its cluster
// is.
func StartEtcd(ctx context.Context, opts EtcdOptions) (*Node, error) {
	if ContainerMode() {
		return startEtcdContainer(ctx, opts)
	}
	bin, err := etcdBinary()
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "etcd"
	}
	bind, port, err := listenOn(opts.Host, opts.Port)
	if err != nil {
		return nil, err
	}
	peerPort := opts.PeerPort
	if peerPort == 0 {
		if _, peerPort, err = listen(opts.Host); err != nil {
			return nil, err
		}
	}
	dir, err := newNodeDir(opts.Name)
	if err != nil {
		return nil, err
	}
	n := &Node{Kind: KindEtcd, Name: opts.Name, Addr: net.JoinHostPort(bind, strconv.Itoa(port)), Dir: dir, Host: opts.Host}
	peerURL := "http://" + net.JoinHostPort(bind, strconv.Itoa(peerPort))
	initial := opts.InitialCluster
	if initial == "" {
		initial = opts.Name + "=" + peerURL
	}
	token := opts.Token
	if token == "" {
		token = filepath.Base(dir)
	}
	launch := func(ctx context.Context, n *Node) (*Process, error) {
		cmd := exec.Command(bin, etcdArgs(etcdMember{name: opts.Name, dataDir: filepath.Join(n.Dir, "data"),
			listenClient: "http://" + n.Addr, advertiseClient: "http://" + n.Addr,
			listenPeer: peerURL, advertisePeer: peerURL, initial: initial, token: token,
			heartbeat: profileSetting(opts.Settings, KindEtcd, etcdHeartbeatName), election: profileSetting(opts.Settings, KindEtcd, etcdElectionName)})...)
		return n.spawnLogged(cmd)
	}
	n.ready = etcdReady
	wipe := func(n *Node) error { return os.RemoveAll(filepath.Join(n.Dir, "data")) }
	if err := n.startProcess(ctx, launch, wipe); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// etcdMember is what one member's command line says.
type etcdMember struct {
	name, dataDir                 string
	listenClient, advertiseClient string
	listenPeer, advertisePeer     string
	initial, token                string
	heartbeat, election           string
}

// etcdArgs is a member's command line after the binary, the same for a
// local process and a container.
func etcdArgs(m etcdMember) []string {
	// With data kept, etcd reads its membership from the data dir and
	// ignores the --initial-* flags; without it (a restart that lost its
	// data), the member bootstraps again under the same name.
	return []string{
		"--name", m.name,
		"--data-dir", m.dataDir,
		"--listen-client-urls", m.listenClient,
		"--advertise-client-urls", m.advertiseClient,
		"--listen-peer-urls", m.listenPeer,
		"--initial-advertise-peer-urls", m.advertisePeer,
		"--initial-cluster", m.initial,
		"--initial-cluster-state", "new",
		"--initial-cluster-token", m.token,
		"--heartbeat-interval", m.heartbeat,
		"--election-timeout", m.election,
		"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn",
	}
}

// etcdToken names one cluster of group, unique to this start.
func etcdToken(group string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return group + "-" + hex.EncodeToString(b[:]), nil
}

// startEtcdContainer is StartEtcd in container mode: one member, or one of
// a cluster whose members are named by network aliases fixed before any
// starts (opts.InitialCluster names them).
func startEtcdContainer(ctx context.Context, opts EtcdOptions) (*Node, error) {
	if opts.Name == "" {
		opts.Name = "etcd"
	}
	if err := containerCannot(opts.Name, opts.Host); err != nil {
		return nil, err
	}
	if opts.Token == "" {
		var err error
		if opts.Token, err = etcdToken(opts.Name); err != nil {
			return nil, err
		}
	}
	alias := etcdAlias(opts)
	peer := "http://" + alias + ":2380"
	initial, token := opts.InitialCluster, opts.Token
	if initial == "" {
		initial = opts.Name + "=" + peer
	}
	cmd := etcdArgs(etcdMember{name: opts.Name, dataDir: "/var/lib/locklab-etcd/data",
		listenClient: "http://0.0.0.0:2379", advertiseClient: "http://" + alias + ":2379",
		listenPeer: "http://0.0.0.0:2380", advertisePeer: peer, initial: initial, token: token,
		heartbeat: profileSetting(opts.Settings, KindEtcd, etcdHeartbeatName), election: profileSetting(opts.Settings, KindEtcd, etcdElectionName)})
	return startContainer(ctx, containerSpec{kind: KindEtcd, name: opts.Name, server: "etcd", port: 2379,
		cmd: cmd, alias: alias, ready: etcdReady})
}

// etcdAlias is the name a member's peers reach it by on the run's network:
// its token (unique to one cluster's start, as a process may run several)
// and its name.
func etcdAlias(opts EtcdOptions) string { return opts.Token + "-" + opts.Name }

// startEtcdContainers starts a cluster's members as containers together:
// a member is ready only once a quorum is.
func startEtcdContainers(ctx context.Context, members []Member) ([]*Node, error) {
	token, err := etcdToken(members[0].Group)
	if err != nil {
		return nil, err
	}
	var initial []string
	for _, m := range members {
		initial = append(initial, m.Name+"=http://"+etcdAlias(EtcdOptions{Name: m.Name, Token: token})+":2380")
	}
	return startTogether(members, func(i int, m Member) (*Node, error) {
		return StartEtcd(ctx, EtcdOptions{Name: m.Name, Host: m.Host, InitialCluster: strings.Join(initial, ","), Token: token, Settings: m.Settings})
	})
}

// etcdReady asks the member's /health, from wherever the member's network
// is reached.
func etcdReady(ctx context.Context, n *Node) error {
	body, err := etcdHTTP(ctx, n.dialer(), n.Addr, "/health")
	if err != nil {
		return err
	}
	if !strings.Contains(body, `"health":"true"`) {
		return fmt.Errorf("health: %s", strings.TrimSpace(body))
	}
	return nil
}

// etcdHTTP GETs path from the member at addr (through dial, nil: the
// default dialer).
func etcdHTTP(ctx context.Context, dial Dialer, addr, path string) (string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	if dial != nil {
		tr.DialContext = dial
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// etcdClient opens a client of the members at addrs (through dial, nil:
// the default dialer), quiet: its own log would only repeat our errors.
func etcdClient(addrs []string, dial Dialer) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: addrs, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if dial != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		})}
	}
	return clientv3.New(cfg)
}

// etcdKind is etcd's home: one member alone, or a cluster whose members
// start together, each told every member's peer URL.
type etcdKind struct{}

func init() { RegisterKind(etcdKind{}) }

func (etcdKind) Kind() topology.Kind { return topology.Etcd }
func (etcdKind) Package() string     { return "etcd-server" }
func (etcdKind) Image() string       { return "etcd" }

// Start starts one member, or every member of a cluster at once: a member
// is ready only when a quorum has formed, so starting them one after
// another would wait forever on the first.
func (etcdKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	if ContainerMode() {
		return startEtcdContainers(ctx, members)
	}
	var initial []string
	for i := range members {
		m := &members[i]
		p, err := m.PortFor("peer")
		if err != nil {
			return nil, err
		}
		initial = append(initial, m.Name+"=http://"+net.JoinHostPort(m.Bind, strconv.Itoa(p)))
	}
	token, err := etcdToken(members[0].Group)
	if err != nil {
		return nil, err
	}
	return startTogether(members, func(i int, m Member) (*Node, error) {
		return StartEtcd(ctx, EtcdOptions{Name: m.Name, Host: m.Host, Port: m.Port,
			PeerPort: m.Ports["peer"], InitialCluster: strings.Join(initial, ","), Token: token, Settings: m.Settings})
	})
}

// Ensembles: a cluster starts wherever etcd does, as local processes or
// as containers.
func (etcdKind) Ensembles() error { return nil }

func (etcdKind) Endpoint(nodes []*Node) topology.Endpoint {
	return topology.Endpoint{Kind: topology.Etcd, Addrs: addrsOf(nodes)}
}

// Role asks the member's maintenance Status: it leads when the leader it
// reports is itself. A member that knows no leader (cut off, or in an
// election) is a follower: it is not the one a fault on the leader means.
// A cluster of one is its own leader.
func (etcdKind) Role(ctx context.Context, n *Node) (string, error) {
	c, err := etcdClient([]string{n.Addr}, n.dialer())
	if err != nil {
		return "", err
	}
	defer c.Close()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := c.Status(sctx, n.Addr)
	if err != nil {
		return "", fmt.Errorf("status of %s: %w", n.Name, err)
	}
	if st.Leader != 0 && st.Leader == st.Header.MemberId {
		return "leader", nil
	}
	return "follower", nil
}

// Cheapest is a linearizable write, not a read. Every grant of an etcd
// lock commits at least one write through raft (the transaction that
// creates the lock key, besides the lease), so that is the floor no lock
// on etcd can go under. A serializable Get is answered by the member
// alone and would measure the gRPC stack, not the cluster; a linearizable
// Get costs a ReadIndex round to a quorum but no log append or fsync, so it
// too sits below anything a grant can do.
func (etcdKind) Cheapest() string { return "put (one linearizable write)" }

func (etcdKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	c, err := etcdClient(ep.Addrs, nil)
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context) error {
		_, err := c.Put(ctx, "locklab/limit", "x")
		return err
	}, func() { c.Close() }, nil
}

// NoEmptyRestart: a member that lost its data dir cannot rejoin the
// cluster that bootstrapped it (etcd exits: "member has already been
// bootstrapped"); bringing it back is an operator's member remove and add,
// which is a membership change, not the crash-and-restart the fault is.
func (etcdKind) NoEmptyRestart() string {
	return "an etcd member restarted without its data cannot rejoin the cluster that bootstrapped it (etcd refuses it); " +
		"bringing it back is an operator's membership change, not a restart"
}

func (etcdKind) CostUnit() string { return "etcd gRPC messages" }

func (etcdKind) ServedAtSessionEnd() bool { return false }

// Served sums grpc_server_msg_received_total over the members: every
// request message a client sent, unary or on a stream (a lease keep-alive,
// a watch), as the servers counted them. Raft's own traffic between
// members is not gRPC and is not counted.
func (etcdKind) Served(ctx context.Context, ep topology.Endpoint, _ bool) (float64, error) {
	var total float64
	for _, addr := range ep.Addrs {
		body, err := etcdHTTP(ctx, nil, addr, "/metrics")
		if err != nil {
			return 0, fmt.Errorf("metrics of %s: %w", addr, err)
		}
		v, ok := sumMetric(body, "grpc_server_msg_received_total")
		if !ok {
			return 0, fmt.Errorf("metrics of %s have no grpc_server_msg_received_total", addr)
		}
		total += v
	}
	return total, nil
}

// sumMetric adds every sample of a Prometheus text-format counter.
func sumMetric(body, name string) (float64, bool) {
	var total float64
	found := false
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest != "" && rest[0] != '{' && rest[0] != ' ' {
			continue // another metric whose name starts the same
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		total += v
		found = true
	}
	return total, found
}

// Describe asks the first member's maintenance Status for its version.
func (etcdKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	if len(ep.Addrs) == 0 {
		return Description{}, errors.New("no etcd address")
	}
	c, err := etcdClient(ep.Addrs[:1], nil)
	if err != nil {
		return Description{}, fmt.Errorf("connect to etcd: %w", err)
	}
	defer c.Close()
	st, err := c.Status(ctx, ep.Addrs[0])
	if err != nil {
		return Description{}, fmt.Errorf("etcd status of %s: %w", ep.Addrs[0], err)
	}
	return Description{Version: st.Version, Settings: map[string]string{"members": strconv.Itoa(len(ep.Addrs))}}, nil
}

// OwnServers: a user's etcd members are one cluster, reached through any
// of them.
func (etcdKind) OwnServers() OwnServers {
	return OwnServers{Flag: "etcd", Env: "LOCKLAB_ETCD_ADDRS", Usage: "comma-separated etcd members (default: start them)"}
}

// RoundTripCounter: every request message, unary or on a stream, is one
// message received (Served).
func (etcdKind) RoundTripCounter() string {
	return "etcd grpc_server_msg_received_total (keep-alives included)"
}

// ClockShift: etcd is a Go program, which reads the clock without the C
// library calls the preloaded shim replaces.
func (etcdKind) ClockShift() error {
	return errors.New("etcd is a Go program: it reads the clock without the C library calls the clock shim replaces")
}

// HolderPartition: a holder cut off its etcd members sends no keep-alive,
// so the leader revokes its lease a TTL later and deletes its key; the
// next waiter is granted the lock while the cut holder, which still
// reaches the resource, works on. The lab shows it (scenarios'
// holder-partition and holder-partition-long) and reviews it.
func (etcdKind) HolderPartition(int) error { return nil }

// SilentClient: etcd's leader revokes a lease no keep-alive renewed within
// its TTL (the lab's, in whole seconds), deleting the keys attached to it.
func (etcdKind) SilentClient(map[string]string) error { return nil }

// SingleServerFaults: the crash between an acquire's steps, the restart
// and the scripted fail-over the single-server scenarios aim at a lock's
// one server are shown and reviewed on a single Redis node's locks only
// (the lab's failpoints between acquire steps are in those locks).
func (etcdKind) SingleServerFaults(int) error {
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: etcd's client holds a gRPC connection to every
// member at once, so no one server is the holder's.
func (etcdKind) OneServerSession() error {
	return errors.New("an etcd client holds a connection to every member, so no one server is the holder's")
}

// Roles: an etcd cluster elects a leader.
func (etcdKind) Roles() Roles { return Roles{Elected: "leader"} }
