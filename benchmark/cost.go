package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// What a lock costs its servers is read from the servers' own counters
// before and after the contended measurement, and divided by the number of
// acquisitions: a polling lock pays for every failed attempt, a lock that
// waits on a notification does not.

// costUnit says what the cost figure counts, per backend.
var costUnit = map[string]string{
	BackendRedis:     "Redis commands",
	BackendZooKeeper: "ZooKeeper requests",
	BackendPostgres:  "PostgreSQL transactions",
}

// connectionCommands are what a Redis client sends when it opens a
// connection (and what the counters are read with): set-up, not locking.
var connectionCommands = map[string]bool{"hello": true, "info": true, "select": true, "auth": true, "ping": true}

// serverCounter reads a backend's cumulative request count; settle is set
// for a reading taken after the lock clients closed (see pgTransactions).
func (b *bench) serverCounter(ctx context.Context, backend string, settle bool) (float64, error) {
	switch backend {
	case BackendRedis:
		var total float64
		for _, addr := range b.topo.RedisAddrs {
			n, err := redisCommands(ctx, addr)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	case BackendZooKeeper:
		var total float64
		for _, addr := range b.topo.ZooKeeperAddr {
			m, err := fourLetterWord(ctx, addr, "mntr")
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
	case BackendPostgres:
		return pgTransactions(ctx, b.topo.PostgresDSN, settle)
	}
	return 0, fmt.Errorf("no server counter for backend %q", backend)
}

// redisCommands sums the calls of every command in INFO commandstats but
// the connection set-up ones.
func redisCommands(ctx context.Context, addr string) (float64, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	defer rdb.Close()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO commandstats on %s: %w", addr, err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		// cmdstat_set:calls=12,usec=34,...
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		cmd := strings.TrimPrefix(name, "cmdstat_")
		if connectionCommands[cmd] || strings.HasPrefix(cmd, "client|") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats on %s: bad line %q", addr, line)
				}
				total += n
			}
		}
	}
	return total, nil
}

// fourLetterWord sends a ZooKeeper four-letter word over a raw TCP
// connection and parses the tab- or colon-separated reply.
func fourLetterWord(ctx context.Context, addr, word string) (map[string]string, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
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

// pgTransactions reads the committed plus rolled-back transactions of the
// locks' database. It reads them from a connection to another database
// (template1), so that its own statements are not counted. With settle, it
// first waits (a little) for the lock clients' backends to exit: the lock
// clients are closed before the second reading, and a backend flushes its
// counts when it exits, otherwise up to a second later.
func pgTransactions(ctx context.Context, dsn string, settle bool) (float64, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("parse the PostgreSQL DSN: %w", err)
	}
	lockDB := cfg.Database
	cfg.Database = "template1"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("connect to PostgreSQL's template1 (to count %s's transactions from outside it): %w", lockDB, err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(3 * time.Second); settle && time.Now().Before(deadline); {
		var others int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND datname = $1`, lockDB).Scan(&others)
		if err != nil || others == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var n float64
	err = conn.QueryRow(ctx, `SELECT (xact_commit + xact_rollback)::float8 FROM pg_stat_database WHERE datname = $1`, lockDB).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return n, nil
}
