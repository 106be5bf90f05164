package nemesis

import (
	"sync"

	"github.com/locklab/locklab/cluster"
)

// A watch runs beside a fault and records, from the lab's vantage point,
// what the servers did while it lasted (the split-brain watches). The fault
// starts it at the injection, ends it at the heal to say what it saw in the
// record, and the engine takes its figures after the run; in between it
// stays in a registry by the node it watches, so that runs side by side in
// one process never meet. S is what one kind of watch saw.
type watch[S any] struct {
	stop chan struct{} // nil: the watch never started, seen says why
	done chan struct{}
	mu   sync.Mutex
	seen S
}

// newWatch is a watch about to start, having seen nothing but its zero.
func newWatch[S any](seen S) *watch[S] {
	return &watch[S]{stop: make(chan struct{}), done: make(chan struct{}), seen: seen}
}

// see changes what the watch saw, under its lock: the watch's own
// goroutine and the fault (a promotion it tells the watch of) both write.
func (w *watch[S]) see(change func(*S)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	change(&w.seen)
}

// end stops the watch, waits for its goroutine, and says what it saw; a
// second end only reads.
func (w *watch[S]) end() S {
	if w.stop != nil {
		select {
		case <-w.stop:
		default:
			close(w.stop)
		}
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// watches are one kind's running and ended watches, by the node watched.
type watches[S any] struct {
	mu sync.Mutex
	m  map[*cluster.Node]*watch[S]
}

func (r *watches[S]) put(n *cluster.Node, w *watch[S]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[*cluster.Node]*watch[S]{}
	}
	r.m[n] = w
}

// end stops the watch of n and says what it saw, or none when no watch
// ran there; what it saw stays for take.
func (r *watches[S]) end(n *cluster.Node, none S) S {
	r.mu.Lock()
	w := r.m[n]
	r.mu.Unlock()
	if w == nil {
		return none
	}
	return w.end()
}

// take is end, and forgets the watch.
func (r *watches[S]) take(n *cluster.Node, none S) S {
	seen := r.end(n, none)
	r.mu.Lock()
	delete(r.m, n)
	r.mu.Unlock()
	return seen
}
