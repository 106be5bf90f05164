package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/topology"
)

// The round trips of an uncontended acquire-release pair are counted by
// the servers themselves: one client does countPairs pairs alone while the
// servers count the requests they receive, and the count is divided by
// the pairs. Redis counts through MONITOR, the server's own feed of the
// commands it runs, because its counters (INFO commandstats,
// total_commands_processed) also count every command a Lua script calls,
// which costs no round trip; MONITOR marks those with "lua" and they are
// left out. ZooKeeper counts zk_packets_received (mntr); PostgreSQL the
// transactions of pg_stat_database (a statement outside a transaction block
// is one transaction, and no lock here opens a block per pair); MySQL its
// Questions and prepares (a prepared statement costs a round trip to
// prepare and one to execute, and Questions counts only the second). Commands
// sent in one pipeline are one round trip but several in the feed: no lock
// pipelines on its uncontended path (redis-fair does only while waiting).

// countPairs is enough for a stray request (a session ping, a watchdog
// renewal) to move the figure by well under one round trip.
const countPairs = 300

// roundTripCounter names what a backend's count is read from: its server
// kind's answer (cluster.ServerKind.RoundTripCounter).
func roundTripCounter(backend string) string {
	k, err := cluster.KindOf(topology.Kind(backend))
	if err != nil {
		return ""
	}
	return k.RoundTripCounter()
}

// countRoundTrips runs countPairs uncontended pairs of one client and
// returns what the servers counted.
func (b *bench) countRoundTrips(ctx context.Context, s impls.Spec) (*record.MeasuredRoundTrips, error) {
	be := backendOf(s)
	if be == BackendInProcess {
		return nil, nil
	}
	key := b.key()
	clients, err := b.newClients(load{spec: s, clients: 1, keys: func(int) string { return key }}, nil)
	if err != nil {
		return nil, err
	}
	c := clients[0]
	closed := false
	closeClient := func() {
		if !closed {
			c.close()
			closed = true
		}
	}
	defer closeClient()
	// Warm up, as the timed workloads do: connections and scripts are set
	// up before anything is counted.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if lease, err := c.locker.Acquire(wctx, key+"-warm"); err == nil {
		_ = lease.Release(wctx)
	}
	cancel()

	var perNode func() ([]float64, error)
	switch be {
	case BackendRedis:
		var mons []*redisMonitor
		defer func() {
			for _, m := range mons {
				m.close()
			}
		}()
		addrs, err := b.monitored(ctx)
		if err != nil {
			return nil, err
		}
		for _, addr := range addrs {
			m, err := startRedisMonitor(ctx, addr)
			if err != nil {
				return nil, err
			}
			mons = append(mons, m)
		}
		perNode = func() ([]float64, error) {
			var out []float64
			for _, m := range mons {
				n, err := m.stop(ctx)
				if err != nil {
					return nil, err
				}
				out = append(out, float64(n))
			}
			return out, nil
		}
	default:
		before, err := b.serverCounter(ctx, be, false)
		if err != nil {
			return nil, err
		}
		perNode = func() ([]float64, error) {
			after, err := b.serverCounter(ctx, be, true)
			return []float64{after - before}, err
		}
	}
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i := 0; i < countPairs; i++ {
		lease, err := c.locker.Acquire(actx, key)
		if err != nil {
			return nil, fmt.Errorf("count round trips of %s: acquire %d: %w", s.Name, i, err)
		}
		if err := lease.Release(actx); err != nil {
			return nil, fmt.Errorf("count round trips of %s: release %d: %w", s.Name, i, err)
		}
	}
	// Closed before the last reading: PostgreSQL flushes a backend's
	// counts when it exits.
	closeClient()
	counts, err := perNode()
	if err != nil {
		return nil, err
	}
	busiest := 0.0
	for _, n := range counts {
		busiest = max(busiest, n)
	}
	m := &record.MeasuredRoundTrips{PerPair: busiest / countPairs, Pairs: countPairs, Counter: roundTripCounter(be)}
	// What the lock declares (impls.Spec.RoundTrips) goes beside the count.
	if rt := s.RoundTrips; rt.N > 0 {
		m.Declared, m.Note, m.DeclaredCount = rt.N, rt.Note, rt.CountedAs
	}
	return m, nil
}

// redisMonitor is one MONITOR connection to one Redis node, between two
// markers: ECHO commands sent on a connection of their own, so the count
// covers exactly the commands the server ran between them.
type redisMonitor struct {
	addr   string
	conn   net.Conn
	r      *bufio.Reader
	marker string
}

func startRedisMonitor(ctx context.Context, addr string) (*redisMonitor, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("MONITOR %s: %w", addr, err)
	}
	m := &redisMonitor{addr: addr, conn: conn, r: bufio.NewReaderSize(conn, 1<<16),
		marker: fmt.Sprintf("locklab-count-%d", time.Now().UnixNano())}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		conn.Close()
		return nil, fmt.Errorf("MONITOR %s: %w", addr, err)
	}
	if line, err := m.r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		conn.Close()
		return nil, fmt.Errorf("MONITOR %s: reply %q: %v", addr, strings.TrimSpace(line), err)
	}
	if _, err := m.until(ctx, m.marker+"-start"); err != nil {
		conn.Close()
		return nil, err
	}
	return m, nil
}

// until sends marker and counts the client commands the feed shows before
// it arrives.
func (m *redisMonitor) until(ctx context.Context, marker string) (int, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return 0, fmt.Errorf("MONITOR marker on %s: %w", m.addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ECHO " + marker + "\r\n")); err != nil {
		return 0, fmt.Errorf("MONITOR marker on %s: %w", m.addr, err)
	}
	n := 0
	for {
		line, err := m.r.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("MONITOR feed of %s: %w", m.addr, err)
		}
		if strings.Contains(line, `"`+marker+`"`) {
			return n, nil
		}
		if clientCommand(line) {
			n++
		}
	}
}

// clientCommand tells a command a client sent from one a script called:
// +1700000000.123456 [0 127.0.0.1:5555] "set" ... against [0 lua] "set" ...
func clientCommand(line string) bool {
	open := strings.IndexByte(line, '[')
	end := strings.IndexByte(line, ']')
	if !strings.HasPrefix(line, "+") || open < 0 || end < open {
		return false
	}
	_, source, _ := strings.Cut(line[open+1:end], " ")
	// A cluster client's CLUSTER SLOTS (its view of the slots, reloaded
	// on a timer) is routing, not the lock's.
	return source != "lua" && !strings.Contains(line, `] "cluster" `)
}

// monitored are the Redis servers whose MONITOR feed counts a lock's
// commands: every independent lock node, a Sentinel group's master, or a
// Redis Cluster's masters
// (a replica's feed repeats its master's, replicated).
func (b *bench) monitored(ctx context.Context) ([]string, error) {
	members := b.topo.Lock(topology.RedisCluster)
	if len(members) == 0 {
		// Independent nodes, or a Sentinel group's master (b.redisNodes).
		return b.redisNodes, nil
	}
	var out []string
	for _, n := range members {
		role, err := b.topo.Role(ctx, n.Name)
		if err != nil {
			return nil, err
		}
		if role == "master" {
			out = append(out, n.Addr)
		}
	}
	return out, nil
}

func (m *redisMonitor) stop(ctx context.Context) (int, error) { return m.until(ctx, m.marker+"-end") }

func (m *redisMonitor) close() { m.conn.Close() }
