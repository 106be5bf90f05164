package engine

import (
	"bytes"
	"context"
	"io"
	"os"
	"time"

	lin "github.com/locklab/locklab/linearizability"
)

// waitFor follows the histories of workers until one of them records an
// event of kind after time after, or bound passes.
func waitFor(ctx context.Context, workers []*Worker, kind lin.Kind, after int64, bound time.Duration) (int64, bool) {
	tails := make([]*historyTail, 0, len(workers))
	for _, w := range workers {
		t := &historyTail{path: w.Spec.History}
		defer t.close()
		tails = append(tails, t)
	}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, t := range tails {
			for _, e := range t.next() {
				if e.Kind == kind && e.Time > after {
					return e.Time, true
				}
			}
		}
		// Poll fast: scenarios release their victim while another client is
		// still inside its critical section (sections take 5-20ms).
		time.Sleep(2 * time.Millisecond)
	}
	return 0, false
}

// lastEvent is the time of the last event of kind in w's history so far.
func lastEvent(w *Worker, kind lin.Kind) (int64, bool) {
	t := &historyTail{path: w.Spec.History}
	defer t.close()
	var at int64
	found := false
	for evs := t.next(); len(evs) > 0; evs = t.next() {
		for _, e := range evs {
			if e.Kind == kind {
				at, found = e.Time, true
			}
		}
	}
	return at, found
}

// historyTail reads a worker's history as it grows: the file stays open and
// each call parses only the complete lines appended since the last, so
// polling every few milliseconds stays cheap.
type historyTail struct {
	path    string
	f       *os.File
	off     int64
	partial []byte // a line the worker has not finished writing
}

func (h *historyTail) next() []lin.Event {
	if h.f == nil {
		f, err := os.Open(h.path)
		if err != nil {
			return nil // not created yet
		}
		h.f = f
	}
	buf, err := io.ReadAll(io.NewSectionReader(h.f, h.off, 1<<40))
	if err != nil || len(buf) == 0 {
		return nil
	}
	h.off += int64(len(buf))
	buf = append(h.partial, buf...)
	end := bytes.LastIndexByte(buf, '\n') + 1
	h.partial = append([]byte(nil), buf[end:]...)
	evs, _ := lin.ReadEvents(bytes.NewReader(buf[:end]))
	return evs
}

func (h *historyTail) close() {
	if h.f != nil {
		h.f.Close()
	}
}
