package linearizability

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
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
	// Fault: the harness injected a fault (Text says which; End > Time for
	// faults with a duration, such as a pause).
	Fault Kind = "fault"
	// Reached: how often a fault touched the client it was aimed at (Text
	// names the fault, Value counts, e.g. reads of a skewed clock). A fault
	// that never reached the lock cannot judge it.
	Reached Kind = "reached"
)

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

// WriteEvents saves a history as JSON lines, readable by ReadEvents.
func WriteEvents(path string, events []Event) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("make dir for %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return fmt.Errorf("write history: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write history: %w", err)
	}
	return f.Close()
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
