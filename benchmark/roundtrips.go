package benchmark

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
)

// backendOf names the servers a lock uses: its server kind.
func backendOf(s impls.Spec) string {
	if s.Backend.InProcess || s.Backend.Kind == "" {
		return inProcess
	}
	return string(s.Backend.Kind)
}

// redisNodes is how many independent lock nodes a lock uses, on a kind
// whose nodes are independent (cluster.FanOuter: Redis; 0 for any other
// kind). The report calls them Redis nodes (record.BenchResult.RedisNodes).
func redisNodes(s impls.Spec) int {
	k, err := cluster.KindOf(s.Backend.Kind)
	if err != nil {
		return 0
	}
	if _, ok := k.(cluster.FanOuter); !ok {
		return 0
	}
	return s.Backend.Need().Count()
}

// closestPeer picks the peer library a lock is compared with: same backend,
// then the nearest number of Redis nodes (a one-node lock is compared with a
// one-node peer, Redlock with five-node Redsync), then a Go peer before a
// guest, then by name. Peers and
// in-process locks have no closest peer.
func closestPeer(s impls.Spec, among []impls.Spec) (impls.Spec, bool) {
	if s.Peer || backendOf(s) == inProcess {
		return impls.Spec{}, false
	}
	var cands []impls.Spec
	for _, p := range among {
		// A guest around a lock of ours is no third-party library: it is
		// compared with the lock it wraps (protocolTwins), not as a peer.
		if p.Peer && backendOf(p) == backendOf(s) && !wrapsOurs(p.Name) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return impls.Spec{}, false
	}
	dist := func(p impls.Spec) int {
		d := redisNodes(p) - redisNodes(s)
		if d < 0 {
			d = -d
		}
		return d
	}
	slices.SortStableFunc(cands, func(a, b impls.Spec) int {
		if da, db := dist(a), dist(b); da != db {
			return da - db
		}
		if a.Guest != b.Guest {
			// A guest pays two pipe crossings per operation: a lock of ours
			// is held to a peer in its own language before a guest.
			if a.Guest {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return cands[0], true
}
