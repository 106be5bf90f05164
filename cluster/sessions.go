package cluster

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SessionEnder is a server kind whose server keeps a session per client
// connection and can end one while its client lives, as production
// servers do: an operator's pg_terminate_backend or KILL, an idle-session
// timeout, a pooler recycling its connections. A lock bound to such a
// session (an advisory lock, GET_LOCK, a transaction's row lock) ends with
// it, whether or not its holder has noticed.
type SessionEnder interface {
	// EndSessions ends the sessions of n whose client side of the
	// connection is one of clients, and says how many it ended.
	EndSessions(ctx context.Context, n *Node, clients []netip.AddrPort) (int, error)
}

// ClientConnections lists the client ends (this side's address and port)
// of the established TCP connections process pid has open to server
// (host:port): how a server's session list names that process's sessions.
// It reads the process's own view (/proc/pid/net/tcp is its network
// namespace's), so a client on one of the lab's hosts is found too.
func ClientConnections(pid int, server string) ([]netip.AddrPort, error) {
	want, err := netip.ParseAddrPort(server)
	if err != nil {
		return nil, fmt.Errorf("server address %q: %w", server, err)
	}
	// The process's sockets, by inode: /proc/pid/net/tcp lists every socket
	// of the namespace, other processes' too.
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			own[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return nil, fmt.Errorf("read the connections of pid %d: %w", pid, err)
	}
	var out []netip.AddrPort
	for _, line := range strings.Split(string(b), "\n")[1:] {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "01" || !own[f[9]] { // 01: ESTABLISHED
			continue
		}
		local, err1 := procAddr(f[1])
		remote, err2 := procAddr(f[2])
		if err1 != nil || err2 != nil || remote != want {
			continue
		}
		out = append(out, local)
	}
	return out, nil
}

// procAddr parses /proc/net/tcp's "0100007F:1F90": the IPv4 address as
// the kernel's 32-bit word in this machine's (little-endian) order, the
// port in hex.
func procAddr(s string) (netip.AddrPort, error) {
	ip, port, ok := strings.Cut(s, ":")
	if !ok || len(ip) != 8 {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	raw, err := hex.DecodeString(ip)
	if err != nil {
		return netip.AddrPort{}, err
	}
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], binary.LittleEndian.Uint32(raw))
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(p)), nil
}

// EndSessions kills (KILL CONNECTION) the sessions whose client is one of
// clients, found by the "address:port" MySQL's process list shows for
// each. KILL returns before the session is gone; the server frees its
// named locks and rolls its transaction back as it ends.
func (mysqlKind) EndSessions(ctx context.Context, n *Node, clients []netip.AddrPort) (int, error) {
	c, done, err := mysqlOpen(ctx, n, "")
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	defer done()
	rows, err := c.QueryContext(ctx, "SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()")
	if err != nil {
		return 0, fmt.Errorf("list %s's sessions: %w", n.Name, err)
	}
	want := map[string]bool{}
	for _, a := range clients {
		want[a.String()] = true
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var host sql.NullString
		if err := rows.Scan(&id, &host); err != nil {
			rows.Close()
			return 0, err
		}
		if want[host.String] {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		if _, err := c.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
			return 0, fmt.Errorf("KILL %d on %s: %w", id, n.Name, err)
		}
	}
	return len(ids), nil
}

// EndSessions terminates (pg_terminate_backend) the backends whose client
// is one of clients, waiting for each to exit, so its advisory locks and
// transaction are gone when this returns.
func (postgresKind) EndSessions(ctx context.Context, n *Node, clients []netip.AddrPort) (int, error) {
	cfg, err := pgx.ParseConfig(n.DSN())
	if err != nil {
		return 0, err
	}
	if dial := n.dialer(); dial != nil {
		cfg.DialFunc = dial
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", n.Name, err)
	}
	defer conn.Close(context.Background())
	ended := 0
	for _, a := range clients {
		var k int
		err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
			WHERE host(client_addr) = $1 AND client_port = $2`, a.Addr().String(), int(a.Port())).Scan(&k)
		if err != nil {
			return ended, fmt.Errorf("terminate %s's backend on %s: %w", a, n.Name, err)
		}
		ended += k
	}
	return ended, nil
}
