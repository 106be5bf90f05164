package docclaims

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/url"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/zklock" // registers zookeeper; its lock tree
	"github.com/locklab/locklab/topology"
)

// ZooKeeper is the lock whose ephemeral node is watched.
const ZooKeeper = "zookeeper"

// EphemeralOptions configure the measurement of how long a dead holder's
// ephemeral node outlives it.
type EphemeralOptions struct {
	ZooKeeper []string
	// Session is the session timeout the holders ask for (the lock's TTL).
	Session time.Duration
	Trials  int
	// StartHolder starts a holder in its own process that takes the lock
	// on key and keeps it; kill sends that process SIGKILL and returns
	// once it is reaped.
	StartHolder func(ctx context.Context, key string) (kill func(), err error)
}

// EphemeralResult is one way of dying: each trial's time from the holder's
// end to the node's deletion, as a watcher on another session saw it.
type EphemeralResult struct {
	// Way: "close" (the client closes its session) or "sigkill" (the
	// process is killed; the server learns only by the session's timeout).
	Way       string    `json:"way"`
	Session   string    `json:"session_timeout"`
	DeletedMS []float64 `json:"deleted_ms"`
}

// MeasureEphemeral times the node's deletion after a clean close and
// after a SIGKILL, opt.Trials times each.
func MeasureEphemeral(ctx context.Context, opt EphemeralOptions) ([]EphemeralResult, error) {
	watcher, _, err := zk.Connect(opt.ZooKeeper, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("the watcher's session: %w", err)
	}
	defer watcher.Close()
	spec, err := impls.Lookup(ZooKeeper)
	if err != nil {
		return nil, err
	}
	closed := EphemeralResult{Way: "close", Session: opt.Session.String()}
	killed := EphemeralResult{Way: "sigkill", Session: opt.Session.String()}
	for n := range opt.Trials {
		key := fmt.Sprintf("ephemeral-close-%d-%d", time.Now().UnixNano(), n)
		l, err := spec.New(impls.Config{Servers: topology.At(spec.Backend.Kind, opt.ZooKeeper...), TTL: opt.Session, ClientID: "holder"})
		if err != nil {
			return nil, err
		}
		if _, err := l.TryAcquire(ctx, key); err != nil {
			l.Close()
			return nil, fmt.Errorf("close trial %d: take the lock: %w", n, err)
		}
		d, err := untilDeleted(ctx, watcher, key, func() { l.Close() })
		if err != nil {
			return nil, fmt.Errorf("close trial %d: %w", n, err)
		}
		closed.DeletedMS = append(closed.DeletedMS, ms(d))

		key = fmt.Sprintf("ephemeral-kill-%d-%d", time.Now().UnixNano(), n)
		kill, err := opt.StartHolder(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("kill trial %d: start the holder: %w", n, err)
		}
		d, err = untilDeleted(ctx, watcher, key, kill)
		if err != nil {
			kill()
			return nil, fmt.Errorf("kill trial %d: %w", n, err)
		}
		killed.DeletedMS = append(killed.DeletedMS, ms(d))
	}
	return []EphemeralResult{closed, killed}, nil
}

// untilDeleted waits for the lock's node to exist, ends its holder, and
// returns how long the node outlived the end, watching the lock's parent.
func untilDeleted(ctx context.Context, c *zk.Conn, key string, end func()) (time.Duration, error) {
	dir := zklock.Root + "/" + url.PathEscape(key)
	deadline := time.Now().Add(30 * time.Second)
	for {
		kids, _, err := c.Children(dir)
		if err == nil && len(kids) > 0 {
			break
		}
		if err != nil && err != zk.ErrNoNode {
			return 0, fmt.Errorf("list %s: %w", dir, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("no lock node under %s within 30s", dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t0 := time.Now()
	end()
	for {
		kids, _, ch, err := c.ChildrenW(dir)
		if err != nil {
			return 0, fmt.Errorf("watch %s: %w", dir, err)
		}
		if len(kids) == 0 {
			return time.Since(t0), nil
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			return 0, fmt.Errorf("the node under %s outlived its holder by 30s", dir)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
