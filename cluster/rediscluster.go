package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/topology"
)

// The fast profile's Redis Cluster node timeout (topology.Fast; the run's
// profile gives the members their own, 15 s under production), chosen
// against the lab's 1 s lease
// and beside Sentinel's down-after (cluster/sentinel.go), so the two
// topologies fail over on the same clock:
//
//   - A member that gets no reply from another for the node timeout flags
//     it PFAIL; once a majority of masters flag a master, it is FAIL, and
//     its replica asks the masters' votes after 500 ms plus up to 500 ms
//     at random, and is promoted. So a master cut off past a lease (the
//     fixed faults last 3 s and more) is failed over while the fault lasts.
//   - Redis 7.0 (cluster.c, clusterUpdateState): a master that has flagged
//     the majority of the masters PFAIL or FAIL, that is one cut off in a
//     minority, turns its cluster state to fail and answers every command
//     with CLUSTERDOWN. So the old master's side takes writes for about one
//     node timeout after the cut (plus up to a 100 ms cron tick), and stops
//     before its replica is promoted: unlike Sentinel's, the two sides do
//     not both accept writes. The lock's window is elsewhere: its key
//     expires on the new master on its own clock, while the holder works.
//   - Shorter would fail over on a loaded machine's hiccups (two shared
//     cores under nice); the link is also dropped and redialled after half
//     the node timeout without a reply.
const redisClusterNodeTimeoutName = "cluster-node-timeout"

// redisClusterKind is the home of a Redis Cluster's members: redis-server
// with cluster mode on. The group is how lock clients reach Redis: its
// Endpoint is a Redis one, via cluster.
type redisClusterKind struct{}

func init() { RegisterKind(redisClusterKind{}) }

func (redisClusterKind) Kind() topology.Kind { return topology.RedisCluster }
func (redisClusterKind) Package() string     { return "redis-server" }

// Image: the Redis image would do, but container mode starts no cluster
// (Ensembles).
func (redisClusterKind) Image() string { return "redis" }

// Ensembles: the lab forms a Redis Cluster of local processes only
// (errRedisClusterInContainers says why).
func (redisClusterKind) Ensembles() error {
	if ContainerMode() {
		return errRedisClusterInContainers
	}
	return nil
}

// Start starts every member with cluster mode on and forms the cluster
// from Go (what `redis-cli --cluster create` does, without its prompts
// and with the waits the faults need): the first half of the members
// are the masters, each given an equal share of the slots and a config
// epoch of its own, the second half their replicas in order (member
// i+n/2 follows member i). It returns once every member says
// cluster_state:ok, knows every other member, and every replica's link
// to its master is up with no sync in progress: a fault before that
// would test the forming, not the fail-over.
func (redisClusterKind) Start(ctx context.Context, members []Member) ([]*Node, error) {
	if err := (redisClusterKind{}).Ensembles(); err != nil {
		return nil, err
	}
	if len(members) < 2 || len(members)%2 != 0 {
		return nil, fmt.Errorf("a Redis Cluster needs masters and a replica of each, an even number of members, got %d", len(members))
	}
	nodes, err := startEach(members, func(m Member) (*Node, error) {
		timeout, err := profileMillis(m.Settings, topology.RedisCluster, redisClusterNodeTimeoutName)
		if err != nil {
			return nil, err
		}
		return StartRedis(ctx, RedisOptions{Name: m.Name, Host: m.Host, Port: m.Port, ClusterNodeTimeout: timeout,
			Settings: withoutSettings(m.Settings, redisClusterNodeTimeoutName)})
	})
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		n.Kind = topology.RedisCluster
	}
	// Forming takes a few seconds of gossip; on a loaded machine (the
	// matrix's cells beside other work) it took up to 20 s.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := formCluster(ctx, nodes); err != nil {
		stopNodes(nodes)
		return nil, fmt.Errorf("form the Redis Cluster: %w", err)
	}
	return nodes, nil
}

// clusterClient is the lab's own connection to one member (not a lock
// client's): no retries, through the hosts' switch when there are hosts.
func clusterClient(n *Node) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1, Dialer: n.dialer(),
		DialTimeout: time.Second, ReadTimeout: time.Second})
}

// formCluster shares the slots out between the masters, introduces every
// member to the first, makes the replicas follow their masters and waits
// until the cluster is whole.
func formCluster(ctx context.Context, nodes []*Node) error {
	half := len(nodes) / 2
	masters, replicas := nodes[:half], nodes[half:]
	clients := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = clusterClient(n)
		defer clients[i].Close()
	}
	ids := make([]string, len(nodes))
	for i, c := range clients {
		id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", nodes[i].Name, err)
		}
		ids[i] = id
	}
	for i := range masters {
		first, last := i*16384/half, (i+1)*16384/half-1
		// Distinct config epochs, as redis-cli gives them, so no collision
		// has to be resolved before a fail-over can win its election.
		if err := clients[i].Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH on %s: %w", masters[i].Name, err)
		}
		if err := clients[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", first, last).Err(); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", first, last, masters[i].Name, err)
		}
	}
	for i, n := range nodes[1:] {
		host, port, err := splitHostPort(n.Addr)
		if err != nil {
			return err
		}
		if err := clients[0].ClusterMeet(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("CLUSTER MEET %s from %s: %w", nodes[i+1].Name, nodes[0].Name, err)
		}
	}
	if err := waitClusterFor(ctx, "every member to know the others", func() error {
		for i, c := range clients {
			known, err := knownMembers(ctx, c)
			if err != nil {
				return fmt.Errorf("%s: %w", nodes[i].Name, err)
			}
			if known != len(nodes) {
				return fmt.Errorf("%s knows %d of %d members", nodes[i].Name, known, len(nodes))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for i, r := range replicas {
		if err := clients[half+i].ClusterReplicate(ctx, ids[i]).Err(); err != nil {
			return fmt.Errorf("CLUSTER REPLICATE %s on %s: %w", masters[i].Name, r.Name, err)
		}
	}
	return waitClusterFor(ctx, "cluster_state:ok everywhere and every replica in sync", func() error {
		for i, c := range clients {
			if err := clusterHealthy(ctx, c, len(nodes)); err != nil {
				return fmt.Errorf("%s: %w", nodes[i].Name, err)
			}
			if i >= half {
				if err := replicaInSync(ctx, c); err != nil {
					return fmt.Errorf("%s: %w", nodes[i].Name, err)
				}
			}
		}
		return nil
	})
}

// waitClusterFor retries check every 100 ms until it passes, or says what
// was still missing when ctx ends.
func waitClusterFor(ctx context.Context, what string, check func() error) error {
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// knownMembers counts the members CLUSTER NODES lists that are past
// their handshake.
func knownMembers(ctx context.Context, c *redis.Client) (int, error) {
	out, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("CLUSTER NODES: %w", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && !strings.Contains(f[2], "handshake") && !strings.Contains(f[2], "noaddr") {
			n++
		}
	}
	return n, nil
}

// clusterHealthy checks CLUSTER INFO: state ok, every slot served, and
// every member known.
func clusterHealthy(ctx context.Context, c *redis.Client, members int) error {
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLUSTER INFO: %w", err)
	}
	f := infoFields(info)
	if f["cluster_state"] != "ok" || f["cluster_slots_ok"] != "16384" || f["cluster_known_nodes"] != strconv.Itoa(members) {
		return fmt.Errorf("cluster_state:%s cluster_slots_ok:%s cluster_known_nodes:%s", f["cluster_state"], f["cluster_slots_ok"], f["cluster_known_nodes"])
	}
	return nil
}

// replicaInSync checks INFO replication on a replica: its link to its
// master is up and no sync is in progress.
func replicaInSync(ctx context.Context, c *redis.Client) error {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("INFO replication: %w", err)
	}
	f := infoFields(info)
	if f["role"] != "slave" || f["master_link_status"] != "up" || f["master_sync_in_progress"] != "0" {
		return fmt.Errorf("role:%s master_link_status:%s master_sync_in_progress:%s", f["role"], f["master_link_status"], f["master_sync_in_progress"])
	}
	return nil
}

// infoFields parses INFO's and CLUSTER INFO's name:value lines.
func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

// Endpoint: clients are given every member as seeds, and follow the slots.
func (redisClusterKind) Endpoint(nodes []*Node) topology.Endpoint {
	return topology.Endpoint{Kind: topology.Redis, Via: "cluster", Addrs: addrsOf(nodes)}
}

// Role is the member's replication role (master or replica), as Redis's.
func (redisClusterKind) Role(ctx context.Context, n *Node) (string, error) {
	return redisKind{}.Role(ctx, n)
}

// Replication is the member's INFO replication, as a lone Redis's.
func (redisClusterKind) Replication(ctx context.Context, n *Node) (Replication, error) {
	return redisKind{}.Replication(ctx, n)
}

// MasterOf names the member that masters key's slot now, as the first
// member that answers sees it (CLUSTER KEYSLOT, then CLUSTER SHARDS): the
// master a fault aimed at the lock's master strikes on a cluster. The lab's
// locks put their keys in key's slot (hash tags around key), and the peers
// use key itself, so key's slot is the lock's.
func (redisClusterKind) MasterOf(ctx context.Context, nodes []*Node, key string) (*Node, error) {
	var errs []error
	for _, n := range nodes {
		m, err := masterOf(ctx, n, nodes, key)
		if err == nil {
			return m, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no member named the master of %q's slot: %w", key, errors.Join(errs...))
}

func masterOf(ctx context.Context, asked *Node, nodes []*Node, key string) (*Node, error) {
	c := clusterClient(asked)
	defer c.Close()
	slot, err := c.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER KEYSLOT on %s: %w", asked.Name, err)
	}
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SHARDS on %s: %w", asked.Name, err)
	}
	for _, sh := range shards {
		if !slices.ContainsFunc(sh.Slots, func(r redis.SlotRange) bool { return r.Start <= slot && slot <= r.End }) {
			continue
		}
		for _, m := range sh.Nodes {
			if m.Role != "master" {
				continue
			}
			addr := net.JoinHostPort(m.IP, strconv.FormatInt(m.Port, 10))
			for _, n := range nodes {
				if sameAddr(n.Addr, addr) {
					return n, nil
				}
			}
			return nil, fmt.Errorf("%s says slot %d is mastered at %s, no member of this run", asked.Name, slot, addr)
		}
	}
	return nil, fmt.Errorf("%s says no master serves slot %d", asked.Name, slot)
}

// sameAddr compares host:port addresses as addresses, not strings.
func sameAddr(a, b string) bool {
	ah, ap, err1 := net.SplitHostPort(a)
	bh, bp, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return ap == bp && net.ParseIP(ah).Equal(net.ParseIP(bh))
}

// MasterOf names the started lock server that masters key now, when the
// run's lock servers share the key space out between masters (a Redis
// Cluster); ok is false when they do not, and any master is the master.
func (t *Topology) MasterOf(ctx context.Context, key string) (name string, ok bool, err error) {
	nodes := t.lock[topology.RedisCluster]
	if len(nodes) == 0 {
		return "", false, nil
	}
	n, err := redisClusterKind{}.MasterOf(ctx, nodes, key)
	if err != nil {
		return "", true, err
	}
	return n.Name, true, nil
}

func (redisClusterKind) Cheapest() string { return "PING" }

// OpenCheapest pings through the lock clients' own cluster client.
func (redisClusterKind) OpenCheapest(ctx context.Context, ep topology.Endpoint) (func(context.Context) error, func(), error) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: ep.Addrs, MaxRedirects: -1, MaxRetries: -1, DialerRetries: 1, PoolSize: 4})
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, func() { rdb.Close() }, nil
}

func (redisClusterKind) CostUnit() string { return "Redis commands" }

func (redisClusterKind) ServedAtSessionEnd() bool { return false }

// Served sums the masters' commands (lockServers); the clients' CLUSTER
// SLOTS are routing, not the lock's cost (redisCommands leaves them out).
func (redisClusterKind) Served(ctx context.Context, ep topology.Endpoint, _ bool) (float64, error) {
	st, err := lockCommands(ctx, ep)
	return st.calls, err
}

// CommandCounts is the masters' calls, command by command.
func (redisClusterKind) CommandCounts(ctx context.Context, ep topology.Endpoint) (map[string]float64, error) {
	st, err := lockCommands(ctx, ep)
	return st.byCommand, err
}

// clusterMasters are the addresses of ep's nodes that are masters now.
func clusterMasters(ctx context.Context, ep topology.Endpoint) ([]string, error) {
	var out []string
	for _, addr := range ep.Addrs {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("INFO replication on %s: %w", addr, err)
		}
		if infoFields(info)["role"] == "master" {
			out = append(out, addr)
		}
	}
	return out, nil
}

// Describe reads the first member's version and persistence settings, as
// a single Redis server's (every member runs the same redis-server).
func (redisClusterKind) Describe(ctx context.Context, ep topology.Endpoint) (Description, error) {
	if len(ep.Addrs) == 0 {
		return Description{}, errors.New("no Redis Cluster member address")
	}
	return describeRedis(ctx, ep.Addrs[0])
}

// OwnServers: none; a cluster's fail-overs are the scenarios' own faults,
// so the lab forms the cluster.
func (redisClusterKind) OwnServers() OwnServers {
	return OwnServers{None: "the lab forms a Redis Cluster itself, to fail its masters over"}
}

// RoundTripCounter: each slot master's feed, as Redis's (a replica's
// repeats its master's).
func (redisClusterKind) RoundTripCounter() string {
	return "Redis MONITOR on each master: client commands, script-called ones left out"
}

// ClockShift: the lab starts cluster members without the shim
// (topology.WithClockShift moves independent Redis lock nodes only).
func (redisClusterKind) ClockShift() error {
	return errors.New("the lab starts Redis Cluster members without the clock shim; a clock jump moves independent Redis lock nodes")
}

// HolderPartition: a holder cut off a slot's master is a fail-over's
// scenario (the cluster promotes the master's replica).
func (redisClusterKind) HolderPartition(int) error {
	return errors.New("a holder cut off a Redis Cluster's master is a fail-over scenario's, not holder-partition's")
}

// SilentClient: a lock on a Redis Cluster is a Redis lock, a key with an
// expiry of its own.
func (redisClusterKind) SilentClient(map[string]string) error { return errRedisNoSession }

// SingleServerFaults: a lock on a Redis Cluster is a Redis lock; its faults are the fail-over scenarios'.
func (redisClusterKind) SingleServerFaults(int) error {
	return errors.New("it faults the single Redis node a lock runs on")
}

// OneServerSession: a cluster client talks to every slot's master.
func (redisClusterKind) OneServerSession() error {
	return errors.New("a Redis Cluster client holds a connection to every slot's master")
}

// Roles: the cluster moves a slot's master role to its replica.
func (redisClusterKind) Roles() Roles { return Roles{Elected: "master"} }
