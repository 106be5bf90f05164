package cluster

import (
	"errors"
	"sync"
	"time"
)

// errStopping refuses a server's launch or a process's spawn while StopAll
// runs: what it would make now could be made after StopAll looked, and
// outlive the run (a server's dir made at the moment of a Ctrl-C once did).
var errStopping = errors.New("every server is being stopped: nothing new starts")

// makeGate keeps what the lab makes on the machine (a server's files and
// process, a worker's process) apart from StopAll: every maker passes the
// gate for as long as it makes, and StopAll shuts it, waits for the makers
// in flight, and only then looks for what to kill and remove. A maker that
// comes while it is shut is refused; one that nests (a launch spawns its
// process) is refused too, and its outer maker leaves with the error.
type makeGate struct {
	mu       sync.Mutex
	inFlight int
	shut     int           // StopAll calls under way (they may overlap)
	final    bool          // the process is exiting: shut for good
	drained  chan struct{} // closed when inFlight drops to 0 while shut
}

// makers is the process's gate.
var makers = &makeGate{}

// enter lets a maker through, or refuses it while StopAll runs. The maker
// calls leave once what it made is where StopAll finds it (a tracked
// process, a file in a tracked dir).
func (g *makeGate) enter() (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut > 0 || g.final {
		return nil, errStopping
	}
	g.inFlight++
	var once sync.Once
	return func() { once.Do(g.leave) }, nil
}

func (g *makeGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	if g.inFlight == 0 && g.drained != nil {
		close(g.drained)
		g.drained = nil
	}
}

// close shuts the gate (for good when final) and waits, at most bound, for
// the makers in flight to leave. It reports whether they all left.
func (g *makeGate) close(final bool, bound time.Duration) bool {
	g.mu.Lock()
	g.shut++
	g.final = g.final || final
	if g.inFlight == 0 {
		g.mu.Unlock()
		return true
	}
	if g.drained == nil {
		g.drained = make(chan struct{})
	}
	drained := g.drained
	g.mu.Unlock()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-drained:
		return true
	case <-t.C:
		return false
	}
}

// open undoes one close (not a final one: the process is exiting).
func (g *makeGate) open() {
	g.mu.Lock()
	g.shut--
	g.mu.Unlock()
}
