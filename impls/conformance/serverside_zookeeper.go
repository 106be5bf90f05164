package conformance

// The suite's reads of a ZooKeeper lock server: every znode a lock
// made, with its flags, and the directory a lock keeps its contenders in.

import (
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/impls"
)

// waitSession waits for the suite's own ZooKeeper connection to have a
// session, then drains its events so the connection never blocks on them.
func waitSession(t *testing.T, events <-chan zk.Event) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return
			}
		case <-timeout:
			t.Fatal("no ZooKeeper session within 10s")
		}
	}
}

// zkNodes lists every znode whose path contains key (escaped or not), with
// its flags, walking the whole tree but /zookeeper.
func (s *server) zkNodes(t *testing.T, key string) []zkNode {
	t.Helper()
	var out []zkNode
	var walk func(p string)
	walk = func(p string) {
		children, _, err := s.zk.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return
		}
		if err != nil {
			t.Fatalf("children of %s: %v", p, err)
		}
		for _, c := range children {
			cp := path.Join(p, c)
			if cp == "/zookeeper" {
				continue
			}
			if strings.Contains(cp, key) {
				_, stat, err := s.zk.Get(cp)
				if errors.Is(err, zk.ErrNoNode) {
					continue
				}
				if err != nil {
					t.Fatalf("get %s: %v", cp, err)
				}
				out = append(out, zkNode{path: cp, ephemeral: stat.EphemeralOwner != 0, czxid: stat.Czxid})
			}
			walk(cp)
		}
	}
	walk("/")
	return out
}

type zkNode struct {
	path      string
	ephemeral bool
	czxid     int64
}

// zkLockDir is the directory under which a lock keeps its contenders for
// key: the parent of the ephemeral nodes a held lock has.
func (s *server) zkLockDir(t *testing.T, l impls.Locker, key string) string {
	t.Helper()
	lease := mustAcquire(t, l, key)
	defer mustRelease(t, lease)
	for _, n := range s.zkNodes(t, key) {
		if n.ephemeral {
			return path.Dir(n.path)
		}
	}
	t.Fatalf("a held lock on %q has no ephemeral node: %v", key, s.zkNodes(t, key))
	return ""
}
