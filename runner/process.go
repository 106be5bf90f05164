package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
)

// Worker is the supervisor's handle on one client process.
type Worker struct {
	ID    int
	Spec  WorkerSpec
	proc  *cluster.Process
	stdin io.WriteCloser
	lines chan string
	log   string

	stopOnce sync.Once
}

// Start re-executes this binary as the client spec describes, with its
// stderr in the file log, inside host (nil: the machine's own network). It
// returns once the worker has built its lock client and said "ready"; a
// worker that does not within readyWithin is killed.
func Start(ctx context.Context, spec WorkerSpec, log string, host *hosts.Host, readyWithin time.Duration) (*Worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own binary for workers: %w", err)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode worker %d spec: %w", spec.ID, err)
	}
	w := &Worker{ID: spec.ID, Spec: spec, lines: make(chan string, 16), log: log}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	logf, err := os.Create(log)
	if err != nil {
		return nil, fmt.Errorf("worker %d log: %w", spec.ID, err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("worker %d stdin: %w", spec.ID, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("worker %d stdout: %w", spec.ID, err)
	}
	if w.proc, err = cluster.SpawnOn(host, cmd); err != nil {
		return nil, fmt.Errorf("start worker %d: %w", spec.ID, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	if _, err := w.Await(ctx, "ready", readyWithin); err != nil {
		w.proc.Kill()
		return nil, err
	}
	return w, nil
}

// Process is the worker's process, for faults that act on it directly.
func (w *Worker) Process() *cluster.Process { return w.proc }

// Await waits for the worker to print a line starting with prefix.
func (w *Worker) Await(ctx context.Context, prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				return "", fmt.Errorf("worker %d exited before %q: %v\n%s", w.ID, prefix, w.proc.Err(), w.LogTail())
			}
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		case <-t.C:
			return "", fmt.Errorf("worker %d did not reach %q within %v", w.ID, prefix, timeout)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Go releases a worker started with WaitForGo.
func (w *Worker) Go() error {
	_, err := io.WriteString(w.stdin, "go\n")
	return err
}

// Continue lets a worker stopped at a failpoint go on. If the worker is
// SIGSTOPped, the line waits in the pipe until it resumes.
func (w *Worker) Continue() error {
	_, err := io.WriteString(w.stdin, "continue\n")
	return err
}

// ContinueThenLeave lets the worker leave its failpoint, finish that
// section (write and release) and exit without starting another.
func (w *Worker) ContinueThenLeave() error {
	// The worker reads its stdin in order: "stop" is seen before "continue".
	_, err := io.WriteString(w.stdin, "stop\ncontinue\n")
	return err
}

// SetWork changes the bounds of the worker's section work from its next
// section on.
func (w *Worker) SetWork(lo, hi time.Duration) error {
	_, err := fmt.Fprintf(w.stdin, "work %v %v\n", lo, hi)
	return err
}

// SkewClock moves the worker's own clock d ahead of true time (0: back
// to it) from its next clock read on; a SIGSTOPped worker reads the line
// when it resumes.
func (w *Worker) SkewClock(d time.Duration) error {
	_, err := fmt.Fprintf(w.stdin, "skew %v\n", d)
	return err
}

// Kill crashes the worker with SIGKILL and returns once it is reaped.
func (w *Worker) Kill() { w.proc.Kill() }

// Running reports whether the worker's process has not exited.
func (w *Worker) Running() bool {
	select {
	case <-w.proc.Done():
		return false
	default:
		return true
	}
}

// Pause freezes the worker with SIGSTOP for d (its watchdogs and
// heartbeats too), then resumes it with SIGCONT. whileStopped, if set, runs
// once the worker is frozen (e.g. Continue, so the worker leaves its
// failpoint the moment it wakes); if it fails the worker resumes at once.
func (w *Worker) Pause(ctx context.Context, d time.Duration, whileStopped func() error) error {
	if err := w.proc.Signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP worker %d: %w", w.ID, err)
	}
	if whileStopped != nil {
		if err := whileStopped(); err != nil {
			w.proc.Signal(syscall.SIGCONT)
			return err
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	if err := w.proc.Signal(syscall.SIGCONT); err != nil {
		return fmt.Errorf("SIGCONT worker %d: %w", w.ID, err)
	}
	return nil
}

// Stop asks the worker to finish its current section and exit; one that
// does not within the bound is killed.
func (w *Worker) Stop(bound time.Duration) {
	w.stopOnce.Do(func() {
		io.WriteString(w.stdin, "stop\n")
		w.stdin.Close()
	})
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-w.proc.Done():
	case <-t.C:
		w.proc.Kill()
	}
}

// LogTail returns the end of the worker's stderr.
func (w *Worker) LogTail() string {
	b, _ := os.ReadFile(w.log)
	s := string(b)
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}
