// Package cluster starts and stops the real servers the lab runs against:
// Redis, ZooKeeper and PostgreSQL as local processes on loopback, each on a
// free port with its own temp dir. Every process it starts is tracked so a
// run can stop them all on exit, on a test failure and on SIGINT/SIGTERM.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/cluster/leftovers"
)

// Process is one running server or worker: its own process group, so that
// a kill or a pause reaches the children too (PostgreSQL forks a backend per
// connection). Every Process is tracked until it exits, so StopAll can end it.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // exit status, valid after done
}

var (
	liveMu sync.Mutex
	live   = map[*Process]struct{}{}
)

// Spawn starts cmd in a new process group and tracks it until it exits.
// Pdeathsig is a backstop: should the lab itself be SIGKILLed, the kernel
// kills the server too, so no server outlives the run that started it.
func Spawn(cmd *exec.Cmd) (*Process, error) { return SpawnOn(nil, cmd) }

// SpawnOn is Spawn inside host h (a network namespace of the lab's own); a
// nil h is the machine's own network, as Spawn. While StopAll runs it
// starts nothing: a process started after StopAll looked would run on
// until the lab exits.
func SpawnOn(h *hosts.Host, cmd *exec.Cmd) (*Process, error) {
	leave, err := makers.enter()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	defer leave()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	start := cmd.Start
	if h != nil {
		start = func() error { return h.Start(cmd) }
	}
	if err := start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	liveMu.Lock()
	live[p] = struct{}{}
	liveMu.Unlock()
	go func() {
		p.err = cmd.Wait()
		liveMu.Lock()
		delete(live, p)
		liveMu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *Process) pid() int { return p.cmd.Process.Pid }

// PID is the process id (and process group id).
func (p *Process) PID() int { return p.pid() }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the exit status, valid once Done is closed.
func (p *Process) Err() error { return p.err }

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) error { return p.signalGroup(sig) }

// Kill SIGKILLs the process group and waits until the process is reaped.
func (p *Process) Kill() { p.kill() }

func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signalGroup sends sig to the process group and to every descendant that
// left it: PostgreSQL's backends call setsid(), so the group alone would
// pause or kill only the postmaster. For SIGCONT the children go first, so
// the parent never runs while they are still stopped; for other signals the
// parent goes first, so it forks no new child meanwhile.
func (p *Process) signalGroup(sig syscall.Signal) error {
	if p.exited() {
		return errors.New("process has exited")
	}
	kids := descendants(p.pid())
	send := func(pids []int) {
		for _, k := range pids {
			_ = syscall.Kill(k, sig)
		}
	}
	if sig == syscall.SIGCONT {
		send(kids)
	}
	if err := syscall.Kill(-p.pid(), sig); err != nil {
		return fmt.Errorf("send %v to process group %d: %w", sig, p.pid(), err)
	}
	if sig != syscall.SIGCONT {
		send(kids)
	}
	if sig == syscall.SIGSTOP {
		return waitStopped(append([]int{p.pid()}, kids...), stopBound)
	}
	return nil
}

// stopBound is how long a SIGSTOPped process may take to stop every thread.
const stopBound = 5 * time.Second

// waitStopped returns once every thread of every pid is stopped (or gone).
// kill(SIGSTOP) returns before the stop is complete: the kernel wakes one
// thread to start the group stop and the others stop only when it gets to
// run, so on a busy machine another thread can go on for milliseconds. Seen
// in a run: a worker frozen at its failpoint was sent SIGSTOP, then its
// "continue", and its stdin thread passed the "continue" on and the write
// landed before the stop took hold; the pause had not happened at all.
func waitStopped(pids []int, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		moving := -1
		for _, pid := range pids {
			if !threadsStopped(pid) {
				moving = pid
				break
			}
		}
		if moving < 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still running %v after SIGSTOP", moving, bound)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// threadsStopped reports whether every thread of pid is in a stopped (T, t)
// or dead (Z, X) state; a process that is gone counts as stopped.
func threadsStopped(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, t := range tasks {
		switch st, ok := procState(dir + "/" + t.Name() + "/stat"); {
		case !ok: // the thread exited
		case st == 'T', st == 't', st == 'Z', st == 'X':
		default:
			return false
		}
	}
	return true
}

// kill SIGKILLs the process tree (a SIGSTOPped process dies from SIGKILL
// too) and waits until the leader has been reaped and every descendant is
// gone, so a restarted PostgreSQL finds no orphan holding its shared memory.
func (p *Process) kill() {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGSTOP) // freeze: no new children
	kids := descendants(p.pid())
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	<-p.done
	deadline := time.Now().Add(5 * time.Second)
	for _, k := range kids {
		for running(k) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// descendants lists every process below pid, read from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(id); ok {
			children[ppid] = append(children[ppid], id)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range children[cur] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent pid from /proc/PID/stat.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; fields after it start at the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	st, ok := procState("/proc/" + strconv.Itoa(pid) + "/stat")
	return ok && st != 'Z'
}

// procState reads the state letter (R, S, T, Z, ...) from a /proc stat file.
// The command name before it may hold spaces and parentheses, so the state
// is found after the last ')'.
func procState(statPath string) (byte, bool) {
	b, err := os.ReadFile(statPath)
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	return b[i+2], true
}

// EndOfTests is StopAll at the end of a test binary: it stops every server,
// then turns a lab dir left behind (this binary's, or a killed worker's or
// child's) into a failure, and returns the exit code to use.
func EndOfTests(code int) int {
	StopAll()
	if stale, err := leftovers.Stale(); err != nil || len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "after the tests these lab dirs remain: %v (%v)\n", stale, err)
		return 1
	}
	return code
}

// StopAll kills every server process this run started and removes what
// the run made (containers, hosts, temp dirs). It is safe to call more than
// once and from several goroutines. Starts in flight finish first and new
// ones are refused until it returns, so nothing is made behind its back.
//
// Once SIGINT or SIGTERM has arrived (StopOnSignal), StopAll does not
// return: the signal's handler stops everything and ends the process with
// 128+signal, and a caller must not go on to report the interrupted run as
// a failure of its own (exit 1 and "acquires failed" instead of 130).
func StopAll() {
	stopAll(false)
	select {
	case <-interrupt.arrived:
		select {} // the handler exits the process
	default:
	}
}

// startBound is how long StopAll waits for the starts in flight: a launch
// is a spawn, or a database's bootstrap (seconds) before it.
const startBound = 20 * time.Second

// stopAll is StopAll; final shuts every door for good, as the process is
// about to exit.
func stopAll(final bool) {
	if !makers.close(final, startBound) {
		fmt.Fprintf(os.Stderr, "locklab: a server start did not finish within %v; the next run's sweep removes what it leaves\n", startBound)
	}
	if !final {
		defer makers.open()
	}
	liveMu.Lock()
	ps := make([]*Process, 0, len(live))
	for p := range live {
		ps = append(ps, p)
	}
	liveMu.Unlock()
	for _, p := range ps {
		p.kill()
	}
	// Container mode: every container and network of this run.
	removeContainers()
	// The hosts go after their processes, so no server sees its network
	// vanish while it still runs.
	hosts.RemoveAll()
	if final {
		leftovers.Close()
	} else {
		leftovers.RemoveOwn()
	}
	// And those of lab runs that are gone: at every exit, so the dirs of a
	// test's SIGKILLed child go with the test binary rather than wait for
	// the next run's start.
	_ = leftovers.SweepDirs()
}

// LivePIDs returns the process ids of the servers still running.
func LivePIDs() []int {
	liveMu.Lock()
	defer liveMu.Unlock()
	pids := make([]int, 0, len(live))
	for p := range live {
		pids = append(pids, p.pid())
	}
	return pids
}

// ErrInterrupted is the cause (context.Cause) of StopOnSignal's context
// once SIGINT or SIGTERM arrived.
var ErrInterrupted = errors.New("interrupted")

// interrupt is the process's one signal handler's state.
var interrupt = struct {
	once    sync.Once
	ctx     context.Context
	cancel  context.CancelCauseFunc
	arrived chan struct{} // closed when the signal arrives
}{arrived: make(chan struct{})}

// StopOnSignal makes SIGINT and SIGTERM stop every server before the program
// exits with the conventional status 128+signal. It returns a context that
// is cancelled the moment the signal arrives, before anything is stopped,
// with ErrInterrupted as its cause: a run given it sees the interrupt as
// its context's end, not as its servers failing under it.
func StopOnSignal() context.Context {
	interrupt.once.Do(func() {
		interrupt.ctx, interrupt.cancel = context.WithCancelCause(context.Background())
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			sig := <-ch
			close(interrupt.arrived)
			name, code := "SIGINT", 130
			if sig == syscall.SIGTERM {
				name, code = "SIGTERM", 143
			}
			interrupt.cancel(fmt.Errorf("%w by %s", ErrInterrupted, name))
			stopAll(true)
			fmt.Fprintf(os.Stderr, "locklab: %v: stopped every server this run started\n", sig)
			os.Exit(code)
		}()
	})
	return interrupt.ctx
}
