package guest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// defaultGrace is how long past a request's own timeout the lab waits for
// its answer before calling the guest silent (docs/guests/protocol.md).
const defaultGrace = 5 * time.Second

// defaultOpTimeout is the timeout_ms sent with a try-acquire, refresh or
// release whose caller set no deadline.
const defaultOpTimeout = 10 * time.Second

// exitWait is how long a closed guest may take to exit before SIGKILL.
const exitWait = 5 * time.Second

// errClosed fails requests made on, or still waiting in, a closed client.
var errClosed = errors.New("guest client closed")

// conn is one running guest process and the requests in flight to it.
type conn struct {
	m      Manifest
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail
	grace  time.Duration
	// onLost takes the guest's lost events; set before hello, as no event
	// can come before it.
	onLost func(lease, reason string)

	wmu sync.Mutex // one line at a time on stdin

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]*call
	helloDone bool
	closing   bool
	dead      error         // why no request can be made any more
	deadCh    chan struct{} // closed when dead is set
	closingCh chan struct{} // closed when close begins: waits end at once
	exited    chan struct{} // closed once the process is reaped
}

// call is one request awaiting its answer.
type call struct {
	op       string
	reply    chan line
	deadline time.Time // zero: none (an acquire with no bound, until cancelled)
	silence  Breach    // the breach its deadline passing is
	// late, if set, takes the answer of a request its caller abandoned
	// (a grant that came after the caller gave up must be released).
	late func(line)
}

// startConn runs the guest's command as a child of this process: it stays
// in this process's group (no Setpgid) and network namespace, so whatever
// freezes, kills or cuts off this process does the same to the guest.
func startConn(m Manifest, grace time.Duration) (*conn, error) {
	argv := m.argv()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = m.Dir
	cmd.Env = append(os.Environ(), "LOCKLAB_GUEST="+m.Name)
	// If the lab dies without closing it (a test binary's panic), the guest
	// dies too: nothing is left running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c := &conn{m: m, cmd: cmd, stderr: &tail{max: 4000}, grace: grace,
		pending: map[int64]*call{}, deadCh: make(chan struct{}), closingCh: make(chan struct{}),
		exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("guest %s: stdin: %w", m.Name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("guest %s: stdout: %w", m.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, &ProtocolError{Guest: m.Name, Breach: BreachCrashAtStart,
			Detail: fmt.Sprintf("cannot start %q in %s: %v", argv, m.Dir, err)}
	}
	go c.read(stdout)
	go c.watch()
	return c, nil
}

// read takes the guest's stdout line by line until it ends, then reaps
// the process.
func (c *conn) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		c.handle(n, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		c.breach(BreachBadJSON, fmt.Sprintf("stdout line %d unreadable: %v", n+1, err))
		_ = c.cmd.Process.Kill()
	}
	werr := c.cmd.Wait() // also waits for stderr to be copied
	c.mu.Lock()
	hello, closing := c.helloDone, c.closing
	c.mu.Unlock()
	switch {
	case closing:
		c.die(errClosed)
	case !hello:
		c.breach(BreachCrashAtStart, fmt.Sprintf("exited before answering hello: %v", exitStatus(werr)))
	default:
		c.breach(BreachCrash, fmt.Sprintf("exited: %v", exitStatus(werr)))
	}
	close(c.exited)
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// handle takes one stdout line: an answer or an event.
func (c *conn) handle(n int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	var l line
	if raw[0] != '{' {
		c.breach(BreachBadJSON, fmt.Sprintf("stdout line %d is not a protocol line (a JSON object): %q", n, clip(raw)))
		return
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		c.breach(BreachBadJSON, fmt.Sprintf("stdout line %d is not a protocol line: %v: %q", n, err, clip(raw)))
		return
	}
	if l.Event != "" {
		if l.Event == "lost" && c.onLost != nil {
			c.onLost(l.Lease, l.Reason)
		}
		return // events this lab does not know are additions it may ignore
	}
	if l.ID == nil || l.OK == nil {
		c.breach(BreachBadJSON, fmt.Sprintf(`stdout line %d has neither "id" and "ok" (an answer) nor "event": %q`, n, clip(raw)))
		return
	}
	c.mu.Lock()
	cl, ok := c.pending[*l.ID]
	delete(c.pending, *l.ID)
	c.mu.Unlock()
	if !ok {
		c.breach(BreachAnswerToNothing, fmt.Sprintf("answer to id %d, which no request awaits (stdout line %d: %q)", *l.ID, n, clip(raw)))
		return
	}
	if !*l.OK && l.Error != nil && l.Error.Kind == kindProtocol {
		c.breach(BreachProtocolAnswer, fmt.Sprintf("%s (id %d): %s", cl.op, *l.ID, l.Error.Message))
		return
	}
	if cl.late != nil {
		go cl.late(l)
		return
	}
	cl.reply <- l
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// watch enforces the answers' deadlines. A tick that comes late means this
// process was frozen (a SIGSTOPped worker, and its guest with it): the
// deadlines move by the time lost, so a pause never reads as silence.
func (c *conn) watch() {
	const every = 50 * time.Millisecond
	t := time.NewTicker(every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-c.deadCh:
			return
		case <-t.C:
			// The time now, not the tick's: after a freeze the tick waiting
			// in the channel is old, and the gap is what was lost.
			now := time.Now()
			frozen := now.Sub(last) - every
			last = now
			c.mu.Lock()
			var silent *call
			var silentID int64
			for id, cl := range c.pending {
				if cl.deadline.IsZero() {
					continue
				}
				if frozen > 250*time.Millisecond {
					cl.deadline = cl.deadline.Add(frozen)
				}
				if now.After(cl.deadline) && silent == nil {
					silent, silentID = cl, id
				}
			}
			c.mu.Unlock()
			if silent != nil {
				c.breach(silent.silence, fmt.Sprintf("no answer to %s (id %d) by its deadline (its timeout plus %v)", silent.op, silentID, c.grace))
				return
			}
		}
	}
}

// breach stops the guest for breaking the protocol: the first breach is the
// error of every request in flight and every later one.
func (c *conn) breach(b Breach, detail string) {
	c.die(&ProtocolError{Guest: c.m.Name, Breach: b, Detail: detail, Stderr: c.stderr.String()})
}

func (c *conn) die(err error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return
	}
	c.dead = err
	close(c.deadCh)
	c.mu.Unlock()
	_ = c.cmd.Process.Kill() // the guest alone: its group is the worker's
	_ = c.stdin.Close()
}

// deadErr is why the client can make no more requests (nil if it can).
func (c *conn) deadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// send writes a request and registers its call; a zero deadline is none.
func (c *conn) send(r request, deadline time.Time, silence Breach) (int64, *call, error) {
	cl := &call{op: r.Op, reply: make(chan line, 1), deadline: deadline, silence: silence}
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return 0, nil, c.dead
	}
	c.nextID++
	r.ID = c.nextID
	c.pending[r.ID] = cl
	c.mu.Unlock()
	b, err := encode(r)
	if err != nil {
		return 0, nil, fmt.Errorf("encode %s: %w", r.Op, err)
	}
	c.wmu.Lock()
	_, err = c.stdin.Write(b)
	c.wmu.Unlock()
	if err != nil {
		// The guest is gone; its reaping says why.
		select {
		case <-c.deadCh:
			return 0, nil, c.dead
		case <-time.After(time.Second):
			return 0, nil, fmt.Errorf("guest %s: write %s: %w", c.m.Name, r.Op, err)
		}
	}
	return r.ID, cl, nil
}

// roundTrip sends r and waits for its answer, the guest's death or ctx.
// timeout is what r's timeout_ms says (0: acquire without bound).
func (c *conn) roundTrip(ctx context.Context, r request, timeout time.Duration) (int64, line, error) {
	ms := timeout.Milliseconds()
	r.TimeoutMS = &ms
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout + c.grace)
	}
	id, cl, err := c.send(r, deadline, BreachSilence)
	if err != nil {
		return 0, line{}, err
	}
	var l line
	err = c.await(ctx, cl, &l)
	return id, l, err
}

// await waits for cl's answer into *into (nil: discard).
func (c *conn) await(ctx context.Context, cl *call, into *line) error {
	select {
	case l := <-cl.reply:
		if into != nil {
			*into = l
		}
		return nil
	case <-c.deadCh:
		return c.dead
	case <-c.closingCh:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// abandon hands a request's answer, when it comes, to late, and makes
// sure it comes: a request with no deadline gets one grace from now.
func (c *conn) abandon(id int64, late func(line)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.pending[id]
	if !ok {
		return
	}
	cl.late = late
	if late == nil {
		cl.late = func(line) {}
	}
	if cl.deadline.IsZero() {
		cl.deadline = time.Now().Add(c.grace)
	}
	// An answer already delivered to reply but not taken is handled too.
	select {
	case l := <-cl.reply:
		go cl.late(l)
	default:
	}
}

// close asks the guest to close, ends its stdin and waits for it to exit,
// SIGKILLing it if it does not within exitWait.
func (c *conn) close() error {
	c.mu.Lock()
	already := c.closing
	c.closing = true
	dead := c.dead
	if !already {
		close(c.closingCh)
	}
	c.mu.Unlock()
	if already {
		<-c.exited
		return nil
	}
	var err error
	if dead == nil {
		_, cl, serr := c.send(request{Op: "close"}, time.Now().Add(c.grace), BreachSilence)
		if serr == nil {
			select {
			case l := <-cl.reply:
				if !*l.OK {
					err = fmt.Errorf("guest %s: close: %s", c.m.Name, msg(l))
				}
			case <-c.deadCh:
			case <-time.After(c.grace):
			}
		}
	}
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(exitWait):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	return err
}

func msg(l line) string {
	if l.Error == nil {
		return "failed, no error given"
	}
	return l.Error.Kind + ": " + l.Error.Message
}
