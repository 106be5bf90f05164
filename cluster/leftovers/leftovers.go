// Package leftovers is the one place that knows what a lab run leaves on
// the machine and removes it once the run is gone.
//
// A run makes temp dirs (server data dirs, its run dir, staging dirs for
// results), network namespaces (cluster/hosts) and, in container mode,
// containers. A run that ends normally, fails, or is stopped by Ctrl-C or
// SIGTERM removes its own (cluster.StopAll calls RemoveOwn; the signal's
// handler calls Close, which also refuses new dirs until the exit); a
// SIGKILLed run cannot, so every run's start calls Sweep, which removes
// whatever belongs to a lab process that no longer exists.
//
// Ownership is recorded, never guessed: every temp dir the lab makes comes
// from MakeDir (or is passed to Own right after it is made) and holds a
// marker file naming its owner by pid and start time, so a pid the kernel
// has since given to another process does not keep a dead run's dir alive,
// and several lab processes can run at once (a `bench` beside `go test`):
// nothing whose owner is alive is ever touched. A dir without a marker is
// not the lab's to judge and is left alone.
//
// Other kinds of leftovers (namespaces, containers) plug in with Register;
// Sweep calls each registered sweeper after removing the dirs.
package leftovers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

const (
	// DirPrefix starts the name of every temp dir the lab makes.
	DirPrefix = "locklab-"
	// markerName is the file in each lab temp dir that names its owner.
	markerName = ".locklab-owner"
)

// Owner names a process by pid and start time (field 22 of /proc/PID/stat,
// in clock ticks since boot): a reused pid has another start time.
type Owner struct {
	PID   int
	Start string
}

// Self is the calling process as an Owner.
func Self() (Owner, error) {
	pid := os.Getpid()
	st, ok := StartTime(pid)
	if !ok {
		return Owner{}, errors.New("read own start time from /proc")
	}
	return Owner{PID: pid, Start: st}, nil
}

// String is "pid:start", the form the marker files and the containers'
// owner labels use.
func (o Owner) String() string { return strconv.Itoa(o.PID) + ":" + o.Start }

// ParseOwner reads the form String writes.
func ParseOwner(s string) (Owner, error) {
	pid, start, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 || start == "" {
		return Owner{}, fmt.Errorf("not an owner (want pid:start): %q", s)
	}
	return Owner{PID: n, Start: start}, nil
}

// Alive reports whether the owner still runs: the same pid with the same
// start time, and not a zombie (a zombie has exited; only its exit status
// waits to be collected, and it can use nothing it made).
func (o Owner) Alive() bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(o.PID) + "/stat")
	if err != nil {
		return false
	}
	state, start, ok := statFields(b)
	return ok && start == o.Start && state != "Z" && state != "X"
}

// StartTime is when process pid started (field 22 of /proc/PID/stat).
func StartTime(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	_, start, ok := statFields(b)
	return start, ok
}

// statFields returns the state (field 3) and start time (field 22) of a
// /proc/PID/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func statFields(b []byte) (state, start string, ok bool) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", "", false
	}
	return f[0], f[19], true
}

// ErrExiting is returned by MakeDir and Own once Close has run: the
// process is on its way out and anything it made now would outlive it.
var ErrExiting = errors.New("the run is exiting: no new lab dir")

// ownDirs are the dirs this process made: what RemoveOwn removes.
//
// A dir is made and tracked under one lock, which RemoveOwn takes too, so
// a dir is either made before a RemoveOwn (and removed by it) or after it:
// never made before and tracked after, the gap through which a server's dir
// made at the moment of a Ctrl-C outlived the run. Once closed, no dir is
// made at all: the handler that removes everything and exits closes it.
type ownDirs struct {
	mu     sync.Mutex
	dirs   map[string]struct{}
	closed bool
}

// own is this process's.
var own = &ownDirs{dirs: map[string]struct{}{}}

// MakeDir makes a temp dir named locklab-<kind>-<random> in the temp dir
// ($TMPDIR), marked as this process's: RemoveOwn removes it (StopAll, at
// every exit that runs code), and Sweep in any later run removes it once
// this process is gone (a SIGKILL). Remove it yourself when done with it;
// removing it twice is harmless. After Close it makes nothing and returns
// ErrExiting.
func MakeDir(kind string) (string, error) { return own.makeDir(kind) }

func (o *ownDirs) makeDir(kind string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return "", fmt.Errorf("make %s dir: %w", kind, ErrExiting)
	}
	dir, err := os.MkdirTemp("", DirPrefix+kind+"-")
	if err != nil {
		return "", fmt.Errorf("make %s dir: %w", kind, err)
	}
	if err := o.track(dir); err != nil {
		_ = os.RemoveAll(dir)
		delete(o.dirs, dir)
		return "", fmt.Errorf("make %s dir: %w", kind, err)
	}
	return dir, nil
}

// Own marks dir, just made by this process in the temp dir with a name
// starting with DirPrefix, as MakeDir marks its own. It is for code that
// makes its dir itself; new code calls MakeDir. After Close it removes dir
// and returns ErrExiting.
//
// The dir is tracked for RemoveOwn first, so even when the marker cannot be
// written (the error says so) every exit that runs code still removes it;
// only a SIGKILL would then leave it.
func Own(dir string) error { return own.own(dir) }

func (o *ownDirs) own(dir string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("mark %s as this run's: %w", dir, ErrExiting)
	}
	return o.track(dir)
}

// track records dir and writes its marker; o.mu is held.
func (o *ownDirs) track(dir string) error {
	o.dirs[dir] = struct{}{}
	self, err := Self()
	if err != nil {
		return fmt.Errorf("mark %s as this run's: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, markerName), []byte(self.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("mark %s as this run's: %w", dir, err)
	}
	return nil
}

// RemoveOwn removes every dir this process made with MakeDir or Own.
// Safe to call more than once and from a signal handler's goroutine.
func RemoveOwn() { own.remove(false) }

// Close is RemoveOwn for a process about to exit: it removes every dir this
// process made, and every later MakeDir or Own fails with ErrExiting, so
// nothing a goroutine still running makes between now and the exit is left
// behind. It cannot be undone.
func Close() { own.remove(true) }

// remove removes the dirs under the lock, so no MakeDir runs meanwhile;
// close keeps it from making any after.
func (o *ownDirs) remove(close bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = o.closed || close
	for d := range o.dirs {
		_ = os.RemoveAll(d)
	}
	o.dirs = map[string]struct{}{}
}

// Dirs lists the lab's temp dirs in the temp dir with their owners. Dirs
// without a readable marker are not listed: not made by the lab, or made
// by a MakeDir that has not written its marker yet.
func Dirs() (map[string]Owner, error) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", tmp, err)
	}
	dirs := map[string]Owner{}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), DirPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, markerName))
		if err != nil {
			continue
		}
		o, err := ParseOwner(string(b))
		if err != nil {
			continue // half-written by a live MakeDir
		}
		dirs[dir] = o
	}
	return dirs, nil
}

// SweepDirs removes the lab temp dirs whose owner is gone. It is cheap
// (one listing of the temp dir): StopAll runs it at every exit too, so the
// dirs of a test's SIGKILLed children go with the test binary.
func SweepDirs() error {
	dirs, err := Dirs()
	if err != nil {
		return err
	}
	var errs []error
	for d, o := range dirs {
		if o.Alive() {
			continue
		}
		// Another process may be sweeping the same dir: gone is done.
		if err := os.RemoveAll(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s of dead run %d: %w", d, o.PID, err))
		}
	}
	return errors.Join(errs...)
}

// Stale lists what Sweep or RemoveOwn should already have removed: lab temp
// dirs of this process or of a process that is gone. Tests assert it is
// empty; other live lab processes' dirs are not listed.
func Stale() ([]string, error) {
	dirs, err := Dirs()
	if err != nil {
		return nil, err
	}
	var out []string
	for d, o := range dirs {
		if o.PID == os.Getpid() || !o.Alive() {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

var (
	sweepersMu sync.Mutex
	sweepers   = map[string]func(context.Context) error{}
)

// Register adds a sweeper of another kind of leftover (namespaces,
// containers), called by every Sweep. sweep must remove only what belongs
// to lab processes that are gone, must be safe while other lab processes
// run, and must return nil promptly when there is nothing it could sweep
// (no root, no Docker engine). Registering a name again replaces it.
func Register(name string, sweep func(context.Context) error) {
	sweepersMu.Lock()
	sweepers[name] = sweep
	sweepersMu.Unlock()
}

// Sweep removes everything dead lab runs left: their temp dirs, then what
// each registered sweeper finds, in the order of their names. It runs at
// the start of every run (cluster.Start). Every sweeper runs even if one
// fails; the error joins theirs.
func Sweep(ctx context.Context) error {
	errs := []error{SweepDirs()}
	sweepersMu.Lock()
	names := make([]string, 0, len(sweepers))
	for n := range sweepers {
		names = append(names, n)
	}
	fns := make(map[string]func(context.Context) error, len(sweepers))
	for n, f := range sweepers {
		fns[n] = f
	}
	sweepersMu.Unlock()
	sort.Strings(names)
	for _, n := range names {
		if err := fns[n](ctx); err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}
