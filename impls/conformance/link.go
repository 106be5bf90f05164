package conformance

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// link is one client's own path to one server: a TCP relay on loopback that
// counts what the client sends (how a probe tells a waiter that polls from
// one that waits for a notification) and can go silent (packets lost both
// ways while both sockets stay open: to the server, a holder that stopped
// talking without closing anything, which is what expiry is for).
//
// It is a second TCP proxy beside faults/netproxy (toxiproxy, which the
// scenarios put on every client's links) because toxiproxy can do neither
// of the two things this suite needs:
//   - probeNoPolling judges a waiter by how many requests it sends (at most
//     about two per TTL for a waiter on a notification), and toxiproxy
//     counts bytes (its metrics), not the client's writes;
//   - silence must keep both sockets open even when one side closes, since
//     a close is a packet too. toxiproxy's nearest fault, the timeout
//     toxic with timeout 0, drops the data but passes a close on (on EOF
//     it closes the other side), and netproxy's Cut closes and refuses
//     connections outright: a visible failure, not silence.
//
// netfault's dropped packets are true silence, but they need root and the
// lab's network namespaces; the conformance suite runs on loopback, as any
// user.
type link struct {
	ln       net.Listener
	upstream string
	sends    atomic.Int64 // client-to-server reads, each at least one request
	silent   atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
}

func newLink(t *testing.T, upstream string) *link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen for a link to %s: %v", upstream, err)
	}
	l := &link{ln: ln, upstream: upstream}
	t.Cleanup(l.close)
	go l.serve()
	return l
}

func (l *link) addr() string { return l.ln.Addr().String() }

func (l *link) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", l.upstream)
		if err != nil {
			c.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, c, s)
		l.mu.Unlock()
		go l.pipe(s, c, true)
		go l.pipe(c, s, false)
	}
}

// pipe copies src to dst; while the link is silent it reads and drops, so
// neither side sees an error or a close, only silence.
func (l *link) pipe(dst, src net.Conn, fromClient bool) {
	defer func() {
		// A close is a packet too: while silent, the other side never
		// learns of it (link.close ends both sockets at cleanup).
		if !l.silent.Load() {
			dst.Close()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.silent.Load() {
			if fromClient {
				l.sends.Add(1)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *link) close() {
	l.ln.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// links gives one client its own links to every server of a config and
// returns the config rewritten to use them.
type links []*link

func (ls links) sends() int64 {
	var n int64
	for _, l := range ls {
		n += l.sends.Load()
	}
	return n
}

func (ls links) silence() {
	for _, l := range ls {
		l.silent.Store(true)
	}
}

// relinkDSN replaces the host:port of a postgres:// URL.
func relinkDSN(dsn, addr string) string {
	at := strings.Index(dsn, "@")
	if at < 0 {
		return dsn
	}
	rest := dsn[at+1:]
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	return dsn[:at+1] + addr + rest[end:]
}

func pgAddr(dsn string) string {
	at := strings.Index(dsn, "@")
	if at < 0 {
		return ""
	}
	rest := dsn[at+1:]
	if end := strings.IndexAny(rest, "/?"); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// settle waits until a link has seen no client sends for quiet, up to max:
// the moment a waiter has made its first attempts and settled into waiting.
func (ls links) settle(quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	last := ls.sends()
	lastChange := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(quiet / 5)
		if n := ls.sends(); n != last {
			last, lastChange = n, time.Now()
		} else if time.Since(lastChange) >= quiet {
			return
		}
	}
}
