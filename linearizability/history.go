package linearizability

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Kind is what an event records.
type Kind string

const (
	// Call: a critical section is about to read the resource (lock held).
	Call Kind = "call"
	// Read: the critical section read Value.
	Read Kind = "read"
	// Return: the critical section ended with Status (and wrote Value if ok).
	Return Kind = "return"
	// Acquired and Released mark lock grants and releases: not operations of
	// the model, but shown on the timeline and used for liveness figures.
	Acquired Kind = "acquired"
	Released Kind = "released"
	// AcquireFailed: an acquire ended without the lock; Text is the error.
	AcquireFailed Kind = "acquire-failed"
	// Fault: the harness injected a fault, described by the event's
	// Injection (End > Time for faults with a duration, such as a pause);
	// Text is the same for people to read.
	Fault Kind = "fault"
	// Reached: how often a fault touched the client it was aimed at (Text
	// names the fault, Value counts, e.g. reads of a skewed clock). A fault
	// that never reached the lock cannot judge it.
	Reached Kind = "reached"
	// Settled: the harness readied the servers before the faults (a
	// nemesis.Settler; Text says what it did and found, End when it was
	// done). Not a fault and no client's doing: nothing judges it.
	Settled Kind = "settled"
	// Lost: the holder's lock told it the lock was lost (its lease's Lost
	// channel closed) while it held it. A figure, not an operation: how
	// long a holder goes on not knowing is what it shows.
	Lost Kind = "lost"
	// Danger: the checker's danger window of one fault (checker.Exposure):
	// from when the faulted holder's claim stopped being protected by the
	// servers (Time) to its last act on the resource under that claim
	// (End). Client is that holder, Value counts the other clients' acts
	// inside it (acquires asked, granted or refused; reads and writes of
	// the resource), Text says which rule opened it. The checker adds it
	// to the history it judged, so the saved history and the timeline show
	// where the fault put the lock at risk; nothing judges it again.
	Danger Kind = "danger-window"
)

// An AcquireFailed event's Text begins with one of these when the acquire
// did not meet the lock: FailedBackend, the servers failed or refused it;
// FailedUnknown, its outcome is unknown (a cut connection). The runner
// writes them and the checker reads them (an acquire that never met the
// lock does not exercise a fault), so they live with the vocabulary.
const (
	FailedBackend = "backend: "
	FailedUnknown = "unknown: "
)

// ReachClockReads names the Reached event a worker whose clock was skewed
// records on exit, with how often the lock read the skewed clock: the only
// way a clock fault can be shown to have reached a lock at all. It lives
// with the history's vocabulary because the nemesis (which asks for it)
// and the runner (which records it) both speak it and neither is below the
// other.
const ReachClockReads = "client clock reads"

// Status is how a critical section ended.
type Status string

const (
	OK      Status = "ok"      // read v, wrote v+1
	Refused Status = "refused" // the resource refused a stale fencing token: nothing written
	Aborted Status = "aborted" // ended before writing, surely without a write
	Unknown Status = "unknown" // the write may or may not have happened
)

// Event is one line of a history. Times are CLOCK_MONOTONIC nanoseconds.
type Event struct {
	Kind   Kind   `json:"kind"`
	Time   int64  `json:"t"`
	Client int    `json:"client"`
	Op     int64  `json:"op,omitempty"` // per-client critical-section number
	Token  uint64 `json:"token,omitempty"`
	Fenced bool   `json:"fenced,omitempty"`
	Value  int64  `json:"value,omitempty"`
	Status Status `json:"status,omitempty"`
	Text   string `json:"text,omitempty"`
	End    int64  `json:"end,omitempty"`
	// Asked is when the acquire that ended in this Acquired or
	// AcquireFailed event was asked for (0: not recorded): a client
	// blocked in the lock's queue through a danger window was trying to
	// take the lock all along, though its grant comes after.
	Asked int64 `json:"asked,omitempty"`
	// Injection is set on Fault events: what struck what. Whatever reads a
	// fault (liveness, the shrinker's suspects, a lesson's timeline) reads
	// these fields, never Text.
	Injection *Injection `json:"injection,omitempty"`
}

// Injection is one fault as a record, in the manner of etcd's robustness
// tests' failpoint injections: the kind, the target as the schedule named
// it, and what it struck. The event carrying it holds when it began (Time)
// and when it healed (End).
type Injection struct {
	// Kind is the nemesis's fault kind (client-kill, server-pause, ...) or,
	// for a scripted scenario's fault, a name of the same form.
	Kind string `json:"kind"`
	// Target is what the step named: a client slot (client-1), a server
	// (redis-2), holder, or several servers (redis-4+redis-5).
	Target string `json:"target"`
	// Clients are the ids of the client processes struck (a slot's id
	// changes when a killed client is replaced); empty for a fault on
	// servers only, which every client meets.
	Clients []int `json:"clients,omitempty"`
	// Servers are the servers struck, by name.
	Servers []string `json:"servers,omitempty"`
	// Note says what was done, in the nemesis's words (SIGKILL; SIGCONT).
	Note string `json:"note,omitempty"`
	// Awaited says what the nemesis waited for before it struck and what
	// it saw (a step's await: which replica acknowledged which offset,
	// how long after the wait began); empty when it struck at once.
	Awaited string `json:"awaited,omitempty"`
	// HeldSince is when the client holding the lock at the strike was
	// granted it (monotonic ns): the client struck when it held the lock,
	// else whichever client was inside its critical section then, as its
	// history records the grant; for a client stopped at a failpoint
	// inside its acquire, after the write that took the lock and before
	// its history records the grant, the moment it stood there. -1: no
	// client held the lock when the fault struck; 0: not recorded (a
	// scripted fault, an older history). With the lease time it says how
	// much of the holder's lease was left when the fault struck
	// (checker.LeaseLeft).
	HeldSince int64 `json:"held_since,omitempty"`
	// Risk is when, by its kind's own declaration, this fault puts a
	// lock at risk (one of the Risk names below); empty: not declared.
	// A fixed scenario states one rule for its whole run; a random
	// schedule's faults each bring their kind's, so explore can say how
	// many of its faults bit.
	Risk string `json:"risk,omitempty"`
	// Promotion is, for a fault that replaced a master or primary by a
	// replica, what the servers' own replication positions said of it:
	// how far the master had written when the fault struck, and how far
	// the replica put in its place had it when it was promoted. nil: the
	// fault promoted nothing (or the record predates it).
	Promotion *Promotion `json:"promotion,omitempty"`
	// Whole is when the fault was in place everywhere (monotonic ns): a
	// cut's rules on every host take a while to put, and until then the
	// sides still reach each other. 0: not recorded (an older history).
	Whole int64 `json:"whole,omitempty"`
	// Healing is when its heal began (monotonic ns): from Whole to
	// Healing the fault held everywhere. 0: not recorded.
	Healing int64 `json:"healing,omitempty"`
}

// The names of the rules for when a fault puts a lock at risk (the
// checker's Risk is one of them). They live with the history's vocabulary
// because the nemesis, whose kinds declare them, never knows the checker,
// which judges by them.
const (
	RiskAtStrike    = "strike"     // the servers lose or replace the holder's claim when it strikes
	RiskAtPromotion = "promotion"  // a replica replaces the master: at risk only if it lacked the master's writes
	RiskAtExpiry    = "expiry"     // the holder is stopped or cut off; its claim ends when its lease does
	RiskRecovery    = "recovery"   // a holder or waiter dies or stops; does the lock free for others?
	RiskContention  = "contention" // nothing is taken from a holder; the clients' contention is the risk
	RiskBothSides   = "both-sides" // the servers split with clients on each side; did both sides come for the lock?
)

// FaultEvent is the one way a fault enters a history: a Fault event from
// start to end (end 0 for an instant fault) carrying inj, with text for
// people (inj.String() when text is empty).
func FaultEvent(start, end int64, inj Injection, text string) Event {
	if text == "" {
		text = inj.String()
	}
	return Event{Kind: Fault, Time: start, End: end, Text: text, Injection: &inj}
}

// String is the injection as one line for people: kind, target, note.
func (in Injection) String() string {
	s := in.Kind + " " + in.Target
	if in.Note != "" {
		s += " (" + in.Note + ")"
	}
	if in.Awaited != "" {
		s += "; awaited " + in.Awaited
	}
	return s
}

// Recorder collects events from many goroutines and, when given a writer,
// streams each as one JSON line as it happens: a worker process that is
// SIGKILLed a moment later has already handed its line to the kernel.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	w      io.Writer
	err    error
}

// NewRecorder returns a recorder; w may be nil to keep events in memory only.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// Record stamps e (unless it carries a time) and appends it.
func (r *Recorder) Record(e Event) {
	if e.Time == 0 {
		e.Time = Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	if r.w != nil && r.err == nil {
		b, _ := json.Marshal(e)
		_, r.err = r.w.Write(append(b, '\n'))
	}
}

// Err reports the first error writing the stream.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Events returns a copy of everything recorded, in time order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	out := append([]Event(nil), r.events...)
	r.mu.Unlock()
	SortEvents(out)
	return out
}

// SortEvents orders events by time, stably.
func SortEvents(events []Event) {
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time < events[j].Time })
}

// CompressedSuffix ends the name of a history written gzipped: results/
// keeps its histories compressed, as JSON lines compress about eightfold
// and every rerun's new seeds add a new set to the repository.
const CompressedSuffix = ".gz"

// WriteEvents saves a history as JSON lines, readable by ReadEvents, and
// gzipped when path ends in CompressedSuffix (ReadEventsFile reads both).
func WriteEvents(path string, events []Event) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("make dir for %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	var out io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, CompressedSuffix) {
		zw = gzip.NewWriter(f)
		out = zw
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return fmt.Errorf("write history %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write history %s: %w", path, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			f.Close()
			return fmt.Errorf("write history %s: %w", path, err)
		}
	}
	return f.Close()
}

// ReadEventsFile reads a history WriteEvents saved, gzipped or plain: it
// goes by the file's first bytes, not its name, so a history written
// before results/ kept them compressed still reads.
func ReadEventsFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read history %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	events, err := ReadEvents(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return events, nil
}

// ReadEvents parses a JSON-lines history. A last line cut short by a killed
// writer is ignored; any other malformed line is an error.
func ReadEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var pending error
	line := 0
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			pending = fmt.Errorf("history line %d: %w", line, err)
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return out, nil
}
