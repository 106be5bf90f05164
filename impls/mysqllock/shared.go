package mysqllock

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// defaultTTL is used when a Config carries none.
const defaultTTL = time.Second

// opTimeout bounds one statement, so a stalled server becomes an error
// (ErrUnknown for writes) before a lease of ttl runs out; as loose as
// PostgreSQL's for the same reasons (a loaded 2-core machine, the first
// statement after a restart).
func opTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/2, 200*time.Millisecond), time.Second)
}

// settings are what every lock here needs to open sessions.
type settings struct {
	impl string
	cfg  *mysql.Config
	ttl  time.Duration
	op   time.Duration
	// sessionInit, if set, runs once on every session the lock opens.
	sessionInit string
}

func newSettings(impl string, c impls.Config) (*settings, error) {
	dsn := c.Servers.First(topology.MySQL)
	if dsn == "" {
		return nil, fmt.Errorf("%s: no MySQL DSN configured", impl)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: parse DSN: %w", impl, err)
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = defaultTTL
	}
	s := &settings{impl: impl, cfg: cfg, ttl: ttl, op: opTimeout(ttl)}
	// Connecting (the TCP dial and the handshake) must fail before a lease
	// would run out, not hang on a stalled server.
	cfg.Timeout = 2 * s.op
	// A statement with arguments is sent as one query with the arguments
	// written into it (escaped by the driver for the connection's
	// utf8mb4), not prepared, executed and closed: that takes two round
	// trips where a lock's statement needs one, and database/sql prepares
	// the statement anew at every call on a connection, so the prepare
	// never pays for itself.
	cfg.InterpolateParams = true
	// The connection's attributes show in performance_schema, so a
	// session can be told apart by people reading the server.
	cfg.ConnectionAttributes = "program_name:locklab-" + impl + "-" + strings.ReplaceAll(c.ClientID, ",", "_")
	return s, nil
}

// withOp bounds one statement by the per-statement timeout.
func (s *settings) withOp(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.op)
}

// session is one server session (one connection): what a GET_LOCK or an
// open transaction belongs to. database/sql's pool would hand a session
// that holds a lock to other code, or run a release on another session, so
// every session here is its own one-connection pool, taken out once. Its
// socket is kept so that Close (a crash) and a stalled server can cut it:
// go-sql-driver gives no other way to end a statement that waits inside
// the server without also waiting for it.
type session struct {
	db   *sql.DB
	conn *sql.Conn
	id   int64 // CONNECTION_ID(): what KILL QUERY names

	mu   sync.Mutex
	sock net.Conn
}

// cut closes the socket under a statement in flight: to the server the
// client is gone, and it ends the session with its locks and transaction.
func (s *session) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sock != nil {
		s.sock.Close()
	}
}

// sessions keeps a Locker's sessions: a few idle ones (holding no lock and
// no transaction), and every one taken out, so Close can end them all.
type sessions struct {
	s *settings

	mu     sync.Mutex
	idle   []*session
	busy   map[*session]struct{}
	closed bool
}

const maxIdle = 2

func newSessions(s *settings) *sessions {
	return &sessions{s: s, busy: map[*session]struct{}{}}
}

var errClosed = errors.New("locker closed")

// get returns an idle session or opens one. Opening changes no lock, so
// its failure is a backend failure (or the context's error).
func (p *sessions) get(ctx context.Context, op string) (*session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, impls.Fail(p.s.impl, op, impls.ErrBackend, errClosed)
	}
	for n := len(p.idle); n > 0; n = len(p.idle) {
		ss := p.idle[n-1]
		p.idle = p.idle[:n-1]
		if !ss.alive() {
			// The server ended the idle session (KILL, wait_timeout, a
			// restart): it held nothing, and a statement sent on it would
			// fail with an outcome the driver cannot know.
			p.mu.Unlock()
			ss.close()
			p.mu.Lock()
			continue
		}
		p.busy[ss] = struct{}{}
		p.mu.Unlock()
		return ss, nil
	}
	p.mu.Unlock()
	ss, err := p.open(ctx)
	if err != nil {
		return nil, impls.Classify(ctx, p.s.impl, op, fmt.Errorf("connect: %w", err), false)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		ss.close()
		return nil, impls.Fail(p.s.impl, op, impls.ErrBackend, errClosed)
	}
	p.busy[ss] = struct{}{}
	return ss, nil
}

func (p *sessions) open(ctx context.Context) (*session, error) {
	ss := &session{}
	cfg := p.s.cfg.Clone()
	var d net.Dialer
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			ss.mu.Lock()
			ss.sock = c
			ss.mu.Unlock()
		}
		return c, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	ss.db = sql.OpenDB(connector)
	ss.db.SetMaxOpenConns(1)
	ctx, cancel := p.s.withOp(ctx)
	defer cancel()
	if ss.conn, err = ss.db.Conn(ctx); err != nil {
		ss.db.Close()
		return nil, err
	}
	if err := ss.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&ss.id); err != nil {
		ss.close()
		return nil, err
	}
	if p.s.sessionInit != "" {
		if _, err := ss.conn.ExecContext(ctx, p.s.sessionInit); err != nil {
			ss.close()
			return nil, err
		}
	}
	return ss, nil
}

// alive looks at an idle session's socket without waiting: an idle
// session has nothing to read, so anything there (the end of the
// connection, or the error a server sends as it kills a session) means the
// server has ended it. It is go-sql-driver's own check, which the driver
// makes only for connections database/sql hands out again, never between
// statements on one pinned connection, as every session here is. The read
// is a raw non-blocking one: Go's own Read with a deadline already passed
// returns the timeout without looking at the socket.
func (ss *session) alive() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sc, ok := ss.sock.(syscall.Conn)
	if !ok {
		return ss.sock != nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	live := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, err := syscall.Read(int(fd), b[:])
		live = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true // one look, never wait
	})
	return err == nil && live
}

// close ends the session cleanly: database/sql's handles let the driver
// say goodbye (COM_QUIT, a few bytes that never wait on the server) and
// close its socket, so the server ends the session at once; the cut after
// is for a driver that left the socket open on an error.
func (ss *session) close() {
	ss.conn.Close()
	ss.db.Close()
	ss.cut()
}

// put returns a session that holds nothing; one too many is closed.
func (p *sessions) put(ss *session) {
	p.mu.Lock()
	delete(p.busy, ss)
	if p.closed || len(p.idle) >= maxIdle {
		p.mu.Unlock()
		ss.close()
		return
	}
	p.idle = append(p.idle, ss)
	p.mu.Unlock()
}

// discard ends a session taken with get: whatever it held, the server
// frees once it sees the connection gone.
func (p *sessions) discard(ss *session) {
	p.mu.Lock()
	delete(p.busy, ss)
	p.mu.Unlock()
	ss.close()
}

// isClosed says whether Close has run.
func (p *sessions) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close cuts every session, idle or taken, releasing nothing: to the
// server it is a crash. A taken session's owner may be running a statement
// on it; only the socket is cut here, and the owner's statement fails.
// Taken sessions are first ended on the server (KILL CONNECTION): a
// session waiting in InnoDB's row-lock queue does not read its socket, so
// with the socket alone cut it stayed queued, was granted the row when
// the holder let go, and held it until its reply failed (a CI run's
// conformance check found the lock taken just after such a release).
func (p *sessions) Close() error {
	p.mu.Lock()
	p.closed = true
	idle, busy := p.idle, p.busy
	p.idle, p.busy = nil, map[*session]struct{}{}
	p.mu.Unlock()
	for _, ss := range idle {
		ss.close()
	}
	if len(busy) > 0 {
		p.killConnections(busy)
	}
	for ss := range busy {
		ss.cut()
	}
	return nil
}

// killConnections ends sessions on the server from a session of its own,
// opened for it (the pool is closed). It is best effort: a server that
// cannot be reached ends them when it sees their sockets gone.
func (p *sessions) killConnections(busy map[*session]struct{}) {
	killer, err := p.open(context.Background())
	if err != nil {
		return
	}
	defer killer.close()
	for ss := range busy {
		ctx, cancel := p.s.withOp(context.Background())
		_, _ = killer.conn.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", ss.id))
		cancel()
	}
}

// exec runs one autocommitted statement on a pooled session under the
// statement timeout. A session whose statement failed is not reused: its
// connection may be broken, or a timeout may have left it mid-statement.
func (p *sessions) exec(ctx context.Context, op string, f func(context.Context, *sql.Conn) error) error {
	ss, err := p.get(ctx, op)
	if err != nil {
		return err
	}
	octx, cancel := p.s.withOp(ctx)
	err = f(octx, ss.conn)
	cancel()
	if err != nil && !isServerError(err) {
		p.discard(ss)
		return err
	}
	p.put(ss)
	return err
}

// killQuery ends the statement session id is running (KILL QUERY), from a
// session of its own: a statement waiting inside the server (GET_LOCK, a
// row lock) ends at once and its session survives, unlike go-sql-driver's
// own cancellation, which closes the connection and leaves the server's
// thread waiting until it notices.
func (p *sessions) killQuery(id int64) error {
	ctx, cancel := p.s.withOp(context.Background())
	defer cancel()
	return p.exec(ctx, "kill", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id))
		return err
	})
}

// wait runs a statement that waits inside the server, on ss, scanning its
// one row into dest. It is not bound by ctx the way a statement usually
// is: when ctx ends, the statement is ended with KILL QUERY and its own
// answer says what happened (granted just before, or not); if the server
// does not answer within a statement timeout after that, the socket is
// cut. killed says a KILL QUERY was sent, so the session may carry it into
// its next statement and must not be reused.
func (p *sessions) wait(ctx context.Context, ss *session, dest []any, query string, args ...any) (killed bool, err error) {
	return p.waitFor(ctx, ss, func() error {
		return ss.conn.QueryRowContext(context.Background(), query, args...).Scan(dest...)
	})
}

// waitFor is wait for any request on ss that may wait inside the server:
// run sends it, not bound by a context, and reads its whole answer.
func (p *sessions) waitFor(ctx context.Context, ss *session, run func() error) (killed bool, err error) {
	done := make(chan struct{})
	sent := make(chan bool, 1)
	go func() {
		select {
		case <-done:
			sent <- false
		case <-ctx.Done():
			if p.killQuery(ss.id) != nil {
				ss.cut()
			}
			select {
			case <-done:
			case <-time.After(p.s.op):
				ss.cut()
			}
			sent <- true
		}
	}()
	err = run()
	close(done)
	return <-sent, err
}

// isServerError reports an error the server answered with (the session is
// fine), as opposed to a broken connection or a timeout.
func isServerError(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) || errors.Is(err, sql.ErrNoRows)
}

// mysqlCode reports whether err is a server error with the given number.
func mysqlCode(err error, code uint16) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == code
}

// Server error numbers the locks tell apart.
const (
	errDupEntry         = 1062 // ER_DUP_ENTRY: the unique key is taken
	errLockWaitTimeout  = 1205 // ER_LOCK_WAIT_TIMEOUT: a row lock not granted in time
	errDeadlock         = 1213 // ER_LOCK_DEADLOCK: InnoDB rolled the transaction back
	errQueryInterrupted = 1317 // ER_QUERY_INTERRUPTED: KILL QUERY ended the statement
)

// ensureSchema runs an idempotent DDL statement. MySQL's CREATE TABLE IF
// NOT EXISTS is safe when clients start together (the data dictionary is
// locked while one creates), unlike PostgreSQL's.
func ensureSchema(ctx context.Context, p *sessions, ddl string) error {
	err := p.exec(ctx, "schema", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, ddl)
		return err
	})
	if err != nil {
		return impls.Classify(ctx, p.s.impl, "schema", fmt.Errorf("create table: %w", err), false)
	}
	return nil
}

// newOwner names one grant: the client's ID for people reading the table,
// and 128 random bits so that no other grant can pass for it.
func newOwner(clientID string) (string, error) {
	token, err := impls.NewToken()
	if err != nil {
		return "", err
	}
	return clientID + ":" + token, nil
}

// hashedPrefix marks a stored key or lock name that is a digest.
const hashedPrefix = "sha256:"

// maxRowKey bounds a key stored as it is in a VARBINARY(255) key column.
const maxRowKey = 255

// rowKey is what a lock table stores for key: the key itself (compared
// byte for byte: the column is binary, so neither case nor trailing spaces
// make two keys one), or, when too long or when it could be taken for a
// digest, "sha256:" and its digest.
func rowKey(key string) string {
	if len(key) <= maxRowKey && !strings.HasPrefix(key, hashedPrefix) {
		return key
	}
	return digest(key)
}

func digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hashedPrefix + hex.EncodeToString(sum[:])
}

// never is a Lost channel for leases that cannot learn they were lost.
var never = make(chan struct{})
