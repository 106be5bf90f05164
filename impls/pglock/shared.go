package pglock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// maxRowKey bounds a key stored as it is: a btree index entry holds at most
// 2704 bytes (a third of a page), and a 4 KB key made the INSERT fail.
const maxRowKey = 1024

// hashedPrefix marks a stored key that is a digest of the real one.
const hashedPrefix = "sha256:"

// rowKey is the value a lock table stores for key: the key itself, or, for
// a key too long for the primary key's index (or one that could be taken
// for a digest), "sha256:" and its digest. Two different keys never get the
// same row: stored keys start with the prefix exactly when they are digests.
func rowKey(key string) string {
	if len(key) <= maxRowKey && !strings.HasPrefix(key, hashedPrefix) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hashedPrefix + hex.EncodeToString(sum[:])
}

// uniqueViolation is SQLSTATE 23505: the row's key is taken.
const uniqueViolation = "23505"

// defaultTTL is used when a Config carries none.
const defaultTTL = time.Second

// opTimeout bounds one statement, so that a stalled server becomes an error
// (ErrUnknown for writes) before a lease of ttl runs out. It is looser than
// the Redis client's timeout: a PostgreSQL statement on a loaded 2-core
// machine, or the first one after a restart, takes far longer than a
// Redis command, and a false "unknown" would be a wrong answer.
func opTimeout(ttl time.Duration) time.Duration {
	t := ttl / 2
	if t < 200*time.Millisecond {
		t = 200 * time.Millisecond
	}
	if t > time.Second {
		t = time.Second
	}
	return t
}

// connSettings are what every lock in this package needs to open connections.
type connSettings struct {
	impl string
	cfg  *pgx.ConnConfig
	ttl  time.Duration
	op   time.Duration // per-statement timeout
}

// newSettings parses the DSN once. cancelOnCtx selects how pgx ends a
// statement whose context ends: by default it cuts the socket (the
// connection dies with it); with cancelOnCtx it first asks the server to
// cancel the statement, so the connection survives a cancelled wait.
func newSettings(impl string, c impls.Config, cancelOnCtx bool) (*connSettings, error) {
	dsn := c.Servers.First(topology.Postgres)
	if dsn == "" {
		return nil, fmt.Errorf("%s: no PostgreSQL DSN configured", impl)
	}
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: parse DSN: %w", impl, err)
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = defaultTTL
	}
	s := &connSettings{impl: impl, cfg: pc, ttl: ttl, op: opTimeout(ttl)}
	// Connecting also has to fail before a lease would run out, not hang on
	// a stalled server.
	pc.ConnectTimeout = 2 * s.op
	// The name shows up in pg_stat_activity, so a session can be told apart
	// (the tests terminate one holder's backend by it).
	pc.RuntimeParams["application_name"] = "locklab-" + impl + "-" + c.ClientID
	if cancelOnCtx {
		pc.BuildContextWatcherHandler = func(pg *pgconn.PgConn) ctxwatch.Handler {
			// If the server cannot answer the cancel request within one
			// statement timeout (it is stalled), the socket is cut after all.
			return &pgconn.CancelRequestContextWatcherHandler{Conn: pg, DeadlineDelay: s.op}
		}
	}
	return s, nil
}

// connPool keeps a few idle connections of one Locker, so that a statement
// does not pay for a new backend each time. pgxpool is not used: it would
// add a module, and the advisory lock must own its connections outright.
type connPool struct {
	s *connSettings

	mu     sync.Mutex
	idle   []*pgx.Conn
	closed bool
	// busy are connections taken out and not yet returned (including those
	// owned by advisory leases); Close closes them too, as a crash would.
	busy map[*pgx.Conn]struct{}
}

const maxIdle = 2

func newConnPool(s *connSettings) *connPool {
	return &connPool{s: s, busy: map[*pgx.Conn]struct{}{}}
}

var errClosed = errors.New("locker closed")

// get returns an idle connection or dials a new one. A dial failure never
// changed any lock, so it is a backend failure (or the context's error).
func (p *connPool) get(ctx context.Context, op string) (*pgx.Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, impls.Fail(p.s.impl, op, impls.ErrBackend, errClosed)
	}
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !c.IsClosed() {
			p.busy[c] = struct{}{}
			p.mu.Unlock()
			return c, nil
		}
	}
	p.mu.Unlock()
	c, err := pgx.ConnectConfig(ctx, p.s.cfg)
	if err != nil {
		return nil, impls.Classify(ctx, p.s.impl, op, fmt.Errorf("connect: %w", err), false)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		closeConn(c)
		return nil, impls.Fail(p.s.impl, op, impls.ErrBackend, errClosed)
	}
	p.busy[c] = struct{}{}
	return c, nil
}

// put returns a connection; a dead one, or one too many, is closed.
func (p *connPool) put(c *pgx.Conn) {
	p.mu.Lock()
	delete(p.busy, c)
	if p.closed || c.IsClosed() || len(p.idle) >= maxIdle {
		p.mu.Unlock()
		closeConn(c)
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// discard closes a connection taken with get instead of returning it.
func (p *connPool) discard(c *pgx.Conn) {
	p.mu.Lock()
	delete(p.busy, c)
	p.mu.Unlock()
	closeConn(c)
}

// Close closes every connection, idle or taken, without releasing anything.
func (p *connPool) Close() error {
	p.mu.Lock()
	p.closed = true
	idle, busy := p.idle, p.busy
	p.idle, p.busy = nil, map[*pgx.Conn]struct{}{}
	p.mu.Unlock()
	for _, c := range idle {
		closeConn(c)
	}
	for c := range busy {
		// A taken connection may be running a statement in its owner's
		// goroutine, and a pgx.Conn must not be used from two at once. Only
		// the socket is cut here (net.Conn is safe for that): the session
		// ends as in a crash, the owner's statement fails, and the owner
		// closes the pgx.Conn when it hands it back.
		c.PgConn().Conn().Close()
	}
	return nil
}

// closeConn sends Terminate and closes the socket, never waiting long on a
// stalled server.
func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c.Close(ctx)
}

// schemaLock is the two-int advisory key that serialises table creation.
// PostgreSQL keeps two-int advisory keys apart from the one-bigint keys
// pg-advisory uses, so it never collides with a lock of the lab.
const schemaLockClass = 0x6c6b6c62 // "lklb"

// ensureSchema runs an idempotent DDL statement. CREATE TABLE IF NOT EXISTS
// alone is not safe when many clients start at once: two of them can both
// see the table missing and one fails on the catalog's unique index. A
// transaction-scoped advisory lock makes them take turns, and the second
// then sees the first's table.
func ensureSchema(ctx context.Context, p *connPool, table int32, ddl string) error {
	c, err := p.get(ctx, "schema")
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1::int4, $2::int4)", int32(schemaLockClass), table); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, ddl)
		return err
	})
	p.put(c)
	if err != nil {
		return impls.Classify(ctx, p.s.impl, "schema", fmt.Errorf("create table: %w", err), false)
	}
	return nil
}

// newOwner returns a value that names one grant: the client's ID, for
// people reading the table, and 128 random bits, so that no other grant
// (not even one of the same client) can pass for it.
func newOwner(clientID string) (string, error) {
	token, err := impls.NewToken()
	if err != nil {
		return "", err
	}
	return clientID + ":" + token, nil
}

// isPgCode reports whether err is a server error with the given SQLSTATE.
func isPgCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// never is a Lost channel for leases that cannot learn they were lost.
var never = make(chan struct{})

// withOp bounds one statement by the per-statement timeout.
func (s *connSettings) withOp(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.op)
}
