package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// processServer runs a node's server as a local process group, on the
// machine's loopback or on one of the lab's hosts: the default backend.
type processServer struct {
	node *Node
	// launch starts the server process; wipe removes its data and keeps
	// the node's dir usable.
	launch func(ctx context.Context, n *Node) (*Process, error)
	wipe   func(n *Node) error

	mu   sync.Mutex
	proc *Process
}

// startProcess makes a local process the node's server (launch starts it,
// wipe empties its data for a restart without it) and starts it, returning
// once it answers requests.
func (n *Node) startProcess(ctx context.Context, launch func(ctx context.Context, n *Node) (*Process, error), wipe func(n *Node) error) error {
	p := &processServer{node: n, launch: launch, wipe: wipe}
	n.server = p
	return p.start(ctx)
}

func (p *processServer) start(ctx context.Context) error {
	n := p.node
	proc, err := p.launchGated(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	p.mu.Lock()
	p.proc = proc
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := p.waitReady(ctx, proc); err != nil {
		proc.kill()
		return fmt.Errorf("%s did not become ready: %w\n--- last lines of %s ---\n%s", n.Name, err, n.LogPath(), p.logTail(20))
	}
	return nil
}

// launchGated launches the server through the lab's gate (makegate.go):
// a launch makes files in the node's dir (its data, its log) and the
// server's process, and StopAll must find both, so it waits for a launch
// in flight and refuses one that comes while it runs. A node whose dir is
// gone was stopped while it started (a Ctrl-C, an interrupted start's
// cleanup): it is not launched, as the launch would make its dir again
// (MkdirAll of its data dir, O_CREATE of its log) where nothing removes it.
// Once the launch has been let through, ctx's end (an interrupt) stops it
// too: what it made is removed by the caller's cleanup (Node.Stop).
func (p *processServer) launchGated(ctx context.Context) (*Process, error) {
	leave, err := makers.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("not launched: %w", context.Cause(ctx))
	}
	if _, err := os.Stat(p.node.Dir); err != nil {
		return nil, fmt.Errorf("not launched, its dir is gone (stopped while it started): %w", err)
	}
	return p.launch(ctx, p.node)
}

// waitReady polls the node's readiness request until it succeeds, the
// process exits, or ctx ends.
func (p *processServer) waitReady(ctx context.Context, proc *Process) error {
	var last error
	for {
		if proc.exited() {
			return fmt.Errorf("process exited: %v", proc.err)
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = p.node.ready(rctx, p.node)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last probe: %v)", ctx.Err(), last)
		case <-time.After(5 * time.Millisecond):
			// Probe often: a restart scenario measures from the crash, and a
			// lazy probe would add its own delay to every restart.
		}
	}
}

func (p *processServer) current() (*Process, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil || p.proc.exited() {
		return nil, fmt.Errorf("%s is not running", p.node.Name)
	}
	return p.proc, nil
}

// pid is the process group leader's pid, 0 if not running.
func (p *processServer) pid() int {
	proc, err := p.current()
	if err != nil {
		return 0
	}
	return proc.pid()
}

// kill SIGKILLs the process group.
func (p *processServer) kill(context.Context) error {
	proc, err := p.current()
	if err != nil {
		return err
	}
	proc.kill()
	return nil
}

// pause SIGSTOPs the process group and every descendant that left it.
func (p *processServer) pause(context.Context) error {
	proc, err := p.current()
	if err != nil {
		return err
	}
	return proc.signalGroup(syscall.SIGSTOP)
}

// resume SIGCONTs them.
func (p *processServer) resume(context.Context) error {
	proc, err := p.current()
	if err != nil {
		return err
	}
	return proc.signalGroup(syscall.SIGCONT)
}

func (p *processServer) restart(ctx context.Context, keepData bool) error {
	if proc, err := p.current(); err == nil {
		proc.kill()
	}
	if !keepData {
		if err := p.wipe(p.node); err != nil {
			return fmt.Errorf("wipe %s: %w", p.node.Name, err)
		}
	}
	return p.start(ctx)
}

func (p *processServer) stop() {
	if proc, err := p.current(); err == nil {
		proc.kill()
	}
}

// disconnect does not apply: a local server is cut off by the hosts'
// network faults.
func (p *processServer) disconnect(context.Context) error {
	return fmt.Errorf("%s is not a container: Disconnect applies in container mode only", p.node.Name)
}

func (p *processServer) reconnect(context.Context) error {
	return fmt.Errorf("%s is not a container: Reconnect applies in container mode only", p.node.Name)
}

// logTail reads the end of the node's log file.
func (p *processServer) logTail(lines int) string {
	b, err := os.ReadFile(p.node.LogPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// spawnLogged starts the server with its output appended to the node's log.
func (n *Node) spawnLogged(cmd *exec.Cmd) (*Process, error) {
	logf, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", n.LogPath(), err)
	}
	defer logf.Close() // the child has its own copy of the descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	return SpawnOn(n.Host, cmd)
}
