// Command lab-redis-setnx-px is a guest adapter (docs/guests/protocol.md,
// version 1) around the lab's own redis-setnx-px lock: the same Go code the
// lab runs natively, reached through the protocol instead of a call. Its
// figures beside the native lock's are what the protocol itself costs (two
// pipe crossings and a JSON line each way per operation), since the lock, its
// client library and its round trips are the same.
//
// It is written from the protocol page alone, as a third-party adapter
// would be: it shares no code with the lab's side of the protocol
// (impls/guest), only the lock.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/redislock" // registers redis-setnx-px
	"github.com/locklab/locklab/topology"
)

// wrapped is the lab lock this guest runs.
const wrapped = "redis-setnx-px"

// request is every field any request of protocol 1 carries.
type request struct {
	ID        int64  `json:"id"`
	Op        string `json:"op"`
	Protocol  int    `json:"protocol"`
	Key       string `json:"key"`
	Lease     string `json:"lease"`
	Target    int64  `json:"target"`
	TimeoutMS int64  `json:"timeout_ms"`
	Config    struct {
		Servers  map[string][]string `json:"servers"`
		TTLMS    int64               `json:"ttl_ms"`
		ClientID string              `json:"client_id"`
	} `json:"config"`
}

// adapter is one lock client and the leases and waits it has in flight.
type adapter struct {
	out    *json.Encoder // stdout; mu guards it so two lines never interleave
	mu     sync.Mutex
	locker impls.Locker
	leases map[string]impls.Lease
	waits  map[int64]context.CancelFunc // requests a cancel may end
	seq    int
}

func main() {
	a := &adapter{out: json.NewEncoder(os.Stdout), leases: map[string]impls.Lease{}, waits: map[int64]context.CancelFunc{}}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "lab-redis-setnx-px: a request that is not JSON: %v\n", err)
			continue
		}
		switch req.Op {
		case "hello":
			a.hello(req)
		case "cancel":
			a.mu.Lock()
			if cancel, ok := a.waits[req.Target]; ok {
				cancel()
			}
			a.mu.Unlock()
			a.send(map[string]any{"id": req.ID, "ok": true})
		case "close":
			// Close the connections, keep the leases (a crash's view), and
			// exit when stdin ends.
			if a.locker != nil {
				a.locker.Close()
			}
			a.send(map[string]any{"id": req.ID, "ok": true})
		case "acquire", "try-acquire", "refresh", "release":
			// One goroutine each, so a wait blocks neither reading nor the
			// other requests.
			ctx, cancel := a.deadline(req)
			go func() { defer cancel(); a.serve(ctx, req) }()
		default:
			a.fail(req.ID, "protocol", "unknown op "+strconv.Quote(req.Op))
		}
	}
	// stdin ended: exit without releasing, as a crash would.
}

func (a *adapter) hello(req request) {
	if req.Protocol != 1 {
		a.fail(req.ID, "protocol", fmt.Sprintf("this guest speaks protocol 1, not %d", req.Protocol))
		return
	}
	spec, err := impls.Lookup(wrapped)
	if err != nil {
		a.fail(req.ID, "backend", err.Error())
		return
	}
	servers := topology.Endpoints{}
	for kind, addrs := range req.Config.Servers {
		servers[topology.Kind(kind)] = topology.Endpoint{Kind: topology.Kind(kind), Addrs: addrs}
	}
	l, err := spec.New(impls.Config{Servers: servers, TTL: time.Duration(req.Config.TTLMS) * time.Millisecond,
		ClientID: req.Config.ClientID})
	if err != nil {
		a.fail(req.ID, "backend", err.Error())
		return
	}
	a.locker = l
	a.send(map[string]any{"id": req.ID, "ok": true, "name": wrapped, "version": version(), "protocol": 1,
		"capabilities": map[string]bool{"fencing": true, "expiry": true}})
}

// deadline is a request's context: bounded by its timeout_ms (an acquire's
// 0 means none), and ended early by a cancel naming it.
func (a *adapter) deadline(req request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if req.TimeoutMS > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMS)*time.Millisecond)
	}
	ctx, stop := context.WithCancel(ctx)
	a.mu.Lock()
	a.waits[req.ID] = stop
	a.mu.Unlock()
	return ctx, func() {
		a.mu.Lock()
		delete(a.waits, req.ID)
		a.mu.Unlock()
		stop()
		cancel()
	}
}

func (a *adapter) serve(ctx context.Context, req request) {
	switch req.Op {
	case "acquire", "try-acquire":
		var lease impls.Lease
		var err error
		if req.Op == "acquire" {
			lease, err = a.locker.Acquire(ctx, req.Key)
		} else {
			lease, err = a.locker.TryAcquire(ctx, req.Key)
		}
		if err != nil {
			a.fail(req.ID, kindOf(err, req.Op == "acquire"), err.Error())
			return
		}
		a.mu.Lock()
		a.seq++
		name := "L" + strconv.Itoa(a.seq)
		a.leases[name] = lease
		a.mu.Unlock()
		answer := map[string]any{"id": req.ID, "ok": true, "lease": name}
		if tok, ok := lease.Token(); ok {
			answer["token"] = tok
		}
		a.send(answer)
	case "refresh", "release":
		a.mu.Lock()
		lease, ok := a.leases[req.Lease]
		a.mu.Unlock()
		if !ok {
			a.fail(req.ID, "lost", "no lease "+strconv.Quote(req.Lease))
			return
		}
		var err error
		if req.Op == "refresh" {
			err = lease.Refresh(ctx)
		} else {
			err = lease.Release(ctx)
		}
		if req.Op == "release" && (err == nil || errors.Is(err, impls.ErrNotHeld)) {
			a.mu.Lock()
			delete(a.leases, req.Lease)
			a.mu.Unlock()
		}
		if err != nil {
			a.fail(req.ID, kindOf(err, false), err.Error())
			return
		}
		a.send(map[string]any{"id": req.ID, "ok": true})
	}
}

// kindOf maps the lab lock's error onto the protocol's kinds. A context
// that ended is an acquire's timeout; for any other request it may have
// ended after the request was sent, so its outcome is unknown.
func kindOf(err error, acquire bool) string {
	var e *impls.Error
	kind := err
	if errors.As(err, &e) {
		kind = e.Kind
	}
	switch {
	case errors.Is(kind, impls.ErrHeld):
		return "held"
	case errors.Is(kind, impls.ErrNotHeld):
		return "lost"
	case errors.Is(kind, impls.ErrBackend):
		return "backend"
	case acquire && (errors.Is(kind, context.DeadlineExceeded) || errors.Is(kind, context.Canceled)):
		return "timeout"
	}
	return "unknown"
}

func (a *adapter) fail(id int64, kind, message string) {
	a.send(map[string]any{"id": id, "ok": false, "error": map[string]string{"kind": kind, "message": message}})
}

// send writes one answer as one line (Encode ends it with a newline; stdout
// is unbuffered, so the line leaves at once).
func (a *adapter) send(v any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.out.Encode(v); err != nil {
		fmt.Fprintf(os.Stderr, "lab-redis-setnx-px: writing an answer: %v\n", err)
		os.Exit(1)
	}
}

// version is the lab's commit the lock was built from, as go build stamps it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "(devel)"
}
