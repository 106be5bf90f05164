package cluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/locklab/locklab/topology"
)

// StartFeedCount counts a lock's round trips on Redis from MONITOR, the
// server's own feed of the commands it runs, on every server its requests
// land on (lockServers: every independent lock node, a Sentinel group's
// master, or a Redis Cluster's masters; a replica's feed repeats its
// master's, replicated). MONITOR marks the commands a Lua script calls
// with "lua" and they are left out. Commands sent in one pipeline are one
// round trip but several in the feed.
func (redisKind) StartFeedCount(ctx context.Context, ep topology.Endpoint) (func(context.Context) ([]float64, error), func(), error) {
	var mons []*redisMonitor
	closeAll := func() {
		for _, m := range mons {
			m.close()
		}
	}
	addrs, err := lockServers(ctx, ep)
	if err != nil {
		return nil, nil, err
	}
	for _, addr := range addrs {
		m, err := startRedisMonitor(ctx, addr)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		mons = append(mons, m)
	}
	stop := func(ctx context.Context) ([]float64, error) {
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
	return stop, closeAll, nil
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

func (m *redisMonitor) stop(ctx context.Context) (int, error) { return m.until(ctx, m.marker+"-end") }

func (m *redisMonitor) close() { m.conn.Close() }
