package redlock

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/impls"
)

// reply is one node's answer to one request.
type reply struct {
	ok  bool  // SET granted, or the script found our token and acted
	err error // classified *impls.Error; nil when the node answered
}

// yes is a node that answered and did what was asked.
func (r reply) yes() bool { return r.err == nil && r.ok }

// fanout is one request sent to every node in parallel. Replies land in
// replies as they come; arrived carries the index of each, so a caller can
// decide before the slowest node answers, and done is closed once every
// request has finished, when replies is complete.
type fanout struct {
	replies []reply
	arrived chan int
	done    chan struct{}
	sent    int // requests sent: nodes not skipped
}

// send starts one request per node, each bounded by the per-node timeout.
// A request to a node goes only after this client's previous request to
// that node has finished: a caller that decides on a majority leaves the
// slowest requests running, and a release must not overtake the SET it
// undoes, nor the next acquire's SET the release before it.
// Errors are classified against the caller's ctx, so a per-node timeout
// (caller still waiting) counts as an ambiguous outcome, and a refused
// connection as a failure. Nodes whose skip entry is true get no request
// and a zero reply.
func (l *Redlock) send(ctx context.Context, op string, do func(ctx context.Context, rdb *redis.Client) (bool, error), skip ...bool) *fanout {
	f := &fanout{replies: make([]reply, len(l.nodes)), arrived: make(chan int, len(l.nodes)), done: make(chan struct{})}
	for i := range l.nodes {
		if i >= len(skip) || !skip[i] {
			f.sent++
		}
	}
	if f.sent == 0 {
		close(f.done)
		return f
	}
	var answered atomic.Int32
	for i, rdb := range l.nodes {
		if i < len(skip) && skip[i] {
			continue
		}
		prev, mine := l.queue(i)
		go func() {
			defer close(mine)
			if prev != nil {
				<-prev
			}
			nctx, cancel := context.WithTimeout(ctx, l.nodeTimeout)
			ok, err := do(nctx, rdb)
			cancel()
			f.replies[i] = reply{ok: ok, err: impls.Classify(ctx, name, op, err, true)}
			f.arrived <- i
			if int(answered.Add(1)) == f.sent {
				close(f.done)
			}
		}()
	}
	return f
}

// until reads the replies as they land and reports whether n of them said
// yes, returning as soon as they have: the slower requests go on. False
// means every request answered without n yeses.
func (f *fanout) until(n int) bool {
	yes := 0
	for range f.sent {
		if f.replies[<-f.arrived].yes() {
			yes++
		}
		if yes >= n {
			return true
		}
	}
	return false
}

// queue takes node i's place in line: prev is closed when the request
// before ours has finished (nil if none), and we close mine when ours has.
func (l *Redlock) queue(i int) (prev, mine chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, mine = l.last[i], make(chan struct{})
	l.last[i] = mine
	return prev, mine
}

// onAll sends one request to every node in parallel and waits for all of
// them.
func (l *Redlock) onAll(ctx context.Context, op string, do func(ctx context.Context, rdb *redis.Client) (bool, error), skip ...bool) []reply {
	f := l.send(ctx, op, do, skip...)
	<-f.done
	return f.replies
}
