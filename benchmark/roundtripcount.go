package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/locklab/locklab/impls"
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
// is one transaction, and no lock here opens a block per pair). Commands
// sent in one pipeline are one round trip but several in the feed: no lock
// pipelines on its uncontended path (redis-fair does only while waiting).

// countPairs is enough for a stray request (a session ping, a watchdog
// renewal) to move the figure by well under one round trip.
const countPairs = 300

// MeasuredRoundTrips is a lock's count, beside what it declares.
type MeasuredRoundTrips struct {
	// PerPair is requests per pair, on the busiest node for multi-node
	// locks (they send to every node in parallel: one round trip each).
	PerPair  float64 `json:"per_pair"`
	Pairs    int     `json:"pairs"`
	Counter  string  `json:"counted_as"`
	Declared int     `json:"declared,omitempty"`
	Note     string  `json:"declared_note,omitempty"`
	// DeclaredCount is what the counter should see per pair when it
	// counts something else than round trips (countedAs).
	DeclaredCount int `json:"declared_count,omitempty"`
}

// Divisor is the round trips per pair a bound divides by: the count, or,
// where the counter does not count round trips, the declaration.
func (m MeasuredRoundTrips) Divisor() float64 {
	if m.DeclaredCount > 0 {
		return float64(m.Declared)
	}
	return m.PerPair
}

// Rounded is the count as a whole number of round trips.
func (m MeasuredRoundTrips) Rounded() int { return int(m.PerPair + 0.5) }

// Agrees reports whether the declaration matches the count.
func (m MeasuredRoundTrips) Agrees() bool {
	want := m.Declared
	if m.DeclaredCount > 0 {
		want = m.DeclaredCount
	}
	return want > 0 && want == m.Rounded()
}

// roundTripCounter names what each backend's count is read from.
var roundTripCounter = map[string]string{
	BackendRedis:          "Redis MONITOR: client commands, script-called ones left out",
	BackendZooKeeper:      "ZooKeeper mntr zk_packets_received",
	BackendPostgres:       "PostgreSQL pg_stat_database xact_commit + xact_rollback",
	string(topology.Etcd): "etcd grpc_server_msg_received_total (keep-alives included)",
}

// countRoundTrips runs countPairs uncontended pairs of one client and
// returns what the servers counted.
func (b *bench) countRoundTrips(ctx context.Context, s impls.Spec) (*MeasuredRoundTrips, error) {
	be := backendOf(s)
	if be == BackendInProcess {
		return nil, nil
	}
	key := b.key()
	clients, err := b.newClients(load{spec: s, clients: 1, keys: func(int) string { return key }})
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
		for _, addr := range b.topo.Endpoints().Addrs(topology.Redis) {
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
	m := &MeasuredRoundTrips{PerPair: busiest / countPairs, Pairs: countPairs, Counter: roundTripCounter[be]}
	if rt, ok := declaredRoundTrips[s.Name]; ok {
		m.Declared, m.Note, m.DeclaredCount = rt.N, rt.Note, countedAs[s.Name]
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
	return source != "lua"
}

func (m *redisMonitor) stop(ctx context.Context) (int, error) { return m.until(ctx, m.marker+"-end") }

func (m *redisMonitor) close() { m.conn.Close() }

// UnmarshalJSON also reads reports written before round trips were
// counted, where the field was the declared number, so that -compare can
// read them.
func (m *MeasuredRoundTrips) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		*m = MeasuredRoundTrips{PerPair: n, Declared: int(n), Counter: "declared (a report from before round trips were counted)"}
		return nil
	}
	type plain MeasuredRoundTrips
	return json.Unmarshal(b, (*plain)(m))
}
