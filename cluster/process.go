// Package cluster starts and stops the real servers the lab runs against:
// Redis, ZooKeeper and PostgreSQL as local processes on loopback, each on a
// free port with its own temp dir. Every process it starts is tracked so a
// run can stop them all on exit, on a test failure and on SIGINT/SIGTERM.
package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
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
func Spawn(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
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

// signalGroup sends sig to the whole process group.
func (p *Process) signalGroup(sig syscall.Signal) error {
	if p.exited() {
		return errors.New("process has exited")
	}
	if err := syscall.Kill(-p.pid(), sig); err != nil {
		return fmt.Errorf("send %v to process group %d: %w", sig, p.pid(), err)
	}
	return nil
}

// kill SIGKILLs the group (a SIGSTOPped process dies from SIGKILL too) and
// waits until the leader has been reaped.
func (p *Process) kill() {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done
	// Children of the leader (PostgreSQL backends) share its group and were
	// killed by the same signal; they are reaped by init.
}

// StopAll kills every server process this run started. It is safe to call
// more than once and from a signal handler goroutine.
func StopAll() {
	liveMu.Lock()
	ps := make([]*Process, 0, len(live))
	for p := range live {
		ps = append(ps, p)
	}
	liveMu.Unlock()
	for _, p := range ps {
		p.kill()
	}
	removeTempDirs()
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

var signalOnce sync.Once

// StopOnSignal makes SIGINT and SIGTERM stop every server before the program
// exits with the conventional status 128+signal.
func StopOnSignal() {
	signalOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			sig := <-ch
			StopAll()
			code := 130
			if sig == syscall.SIGTERM {
				code = 143
			}
			fmt.Fprintf(os.Stderr, "locklab: %v: stopped every server this run started\n", sig)
			os.Exit(code)
		}()
	})
}

var (
	tempMu   sync.Mutex
	tempDirs []string
)

func trackTempDir(dir string) {
	tempMu.Lock()
	tempDirs = append(tempDirs, dir)
	tempMu.Unlock()
}

func removeTempDirs() {
	tempMu.Lock()
	dirs := tempDirs
	tempDirs = nil
	tempMu.Unlock()
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}
