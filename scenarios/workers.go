package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	lin "github.com/locklab/locklab/linearizability"
)

// Worker is the orchestrator's handle on one client process.
type Worker struct {
	ID    int
	Spec  WorkerSpec
	env   *Env
	proc  *cluster.Process
	stdin io.WriteCloser
	lines chan string
	log   string

	stopOnce sync.Once
}

// StartWorker re-executes this binary as client id. edit may change the
// spec (failpoints, skew, work) before it starts. It returns once the
// worker has built its lock client.
func (e *Env) StartWorker(ctx context.Context, id int, lockAddrs []string, edit func(*WorkerSpec)) (*Worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own binary for workers: %w", err)
	}
	ws := WorkerSpec{
		Impl: e.Impl.Name, ID: id, Key: e.Key,
		Redis: lockAddrs, ZooKeeper: e.Topo.ZooKeeperAddr, Postgres: e.Topo.PostgresDSN,
		Resource: e.Topo.ResourceAddr, TTL: e.TTL, Fenced: e.Fencing,
		// Sections of a few milliseconds keep a run to a few hundred of
		// them: enough to catch an overlap, few enough for a readable timeline.
		WorkMin: 5 * time.Millisecond, WorkMax: 20 * time.Millisecond,
		Seed: e.Seed, History: filepath.Join(e.workDir, fmt.Sprintf("client-%d.jsonl", id)),
		AcquireTimeout: e.stuckBound(),
	}
	if edit != nil {
		edit(&ws)
	}
	raw, err := json.Marshal(ws)
	if err != nil {
		return nil, err
	}
	w := &Worker{ID: id, Spec: ws, env: e, lines: make(chan string, 16),
		log: filepath.Join(e.workDir, fmt.Sprintf("client-%d.log", id))}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	logf, err := os.Create(w.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stderr = logf
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// On a run with hosts, every client runs on a host of its own, named
	// client-<id>, so network faults can cut it off.
	var host *hosts.Host
	if e.Topo.Net != nil {
		if host = e.Topo.Net.Host(fmt.Sprintf("client-%d", id)); host == nil {
			if host, err = e.Topo.Net.AddHost(ctx, fmt.Sprintf("client-%d", id)); err != nil {
				return nil, err
			}
		}
	}
	if w.proc, err = cluster.SpawnOn(host, cmd); err != nil {
		return nil, fmt.Errorf("start worker %d: %w", id, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	if _, err := w.Await(ctx, "ready", 30*time.Second); err != nil {
		w.proc.Kill()
		return nil, err
	}
	return w, nil
}

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

// Kill crashes the worker with SIGKILL and records the fault.
func (w *Worker) Kill(why string) {
	w.env.FaultAt(fmt.Sprintf("SIGKILL client %d%s", w.ID, why))
	w.proc.Kill()
}

// Pause freezes the worker with SIGSTOP for d (its watchdogs and
// heartbeats too), then resumes it with SIGCONT; the span is recorded.
// whileStopped, if set, runs once the worker is frozen (e.g. Continue, so
// the worker leaves its failpoint the moment it wakes).
func (w *Worker) Pause(ctx context.Context, d time.Duration, why string, whileStopped func() error) error {
	start := lin.Now()
	if err := w.proc.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	if whileStopped != nil {
		if err := whileStopped(); err != nil {
			w.proc.Signal(syscall.SIGCONT)
			return err
		}
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	err := w.proc.Signal(syscall.SIGCONT)
	w.env.Rec.Record(lin.Event{Kind: lin.Fault, Time: start, End: lin.Now(),
		Text: fmt.Sprintf("SIGSTOP client %d for %v%s", w.ID, d, why)})
	return err
}

// Stop asks the worker to finish its current section and exit; one that
// does not within the bound is killed.
func (w *Worker) Stop(bound time.Duration) {
	w.stopOnce.Do(func() {
		io.WriteString(w.stdin, "stop\n")
		w.stdin.Close()
	})
	select {
	case <-w.proc.Done():
	case <-time.After(bound):
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

// FaultAt records an instantaneous fault on the timeline.
func (e *Env) FaultAt(text string) {
	e.Rec.Record(lin.Event{Kind: lin.Fault, Text: text})
}

// collect merges every worker's history into the run's recorder.
func (e *Env) collect(workers []*Worker) error {
	for _, w := range workers {
		f, err := os.Open(w.Spec.History)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		evs, err := lin.ReadEvents(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("client %d: %w", w.ID, err)
		}
		for _, ev := range evs {
			e.Rec.Record(ev)
		}
	}
	return nil
}
