package linearizability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cs appends the events of one critical section to h.
func cs(h []Event, client int, op int64, call, ret int64, read int64, st Status, token uint64) []Event {
	h = append(h, Event{Kind: Call, Time: call, Client: client, Op: op, Token: token, Fenced: token != 0})
	h = append(h, Event{Kind: Read, Time: call + 1, Client: client, Op: op, Value: read})
	if st != "" {
		ev := Event{Kind: Return, Time: ret, Client: client, Op: op, Status: st}
		if st == OK {
			ev.Value = read + 1
		}
		h = append(h, ev)
	}
	return h
}

func TestCounterModel(t *testing.T) {
	tests := []struct {
		name string
		h    []Event
		want bool
	}{
		{"sequential", cs(cs(nil, 0, 1, 10, 20, 0, OK, 0), 1, 1, 30, 40, 1, OK, 0), true},
		{"lost update: both read 0", cs(cs(nil, 0, 1, 10, 30, 0, OK, 0), 1, 1, 15, 40, 0, OK, 0), false},
		{"stale read after a completed write", cs(cs(nil, 0, 1, 10, 20, 0, OK, 0), 1, 1, 30, 40, 0, OK, 0), false},
		{"stale writer refused by fencing", cs(cs(nil, 0, 1, 10, 50, 0, Refused, 1), 1, 1, 20, 30, 0, OK, 2), true},
		{"aborted section writes nothing", cs(cs(nil, 0, 1, 10, 20, 0, Aborted, 0), 1, 1, 30, 40, 0, OK, 0), true},
		// A killed client (no return) may or may not have written.
		{"unknown that did not land", cs(cs(nil, 0, 1, 10, 0, 0, "", 0), 1, 1, 30, 40, 0, OK, 0), true},
		{"unknown that landed", cs(cs(nil, 0, 1, 10, 0, 0, "", 0), 1, 1, 30, 40, 1, OK, 0), true},
		{"unknown cannot explain a jump", cs(cs(nil, 0, 1, 10, 0, 0, "", 0), 1, 1, 30, 40, 2, OK, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(tt.h, 5*time.Second)
			if r.Linearizable() != tt.want {
				t.Fatalf("linearizable = %v (%v), want %v", r.Linearizable(), r.Outcome, tt.want)
			}
		})
	}
}

func TestUnknownOperationsAreKept(t *testing.T) {
	h := cs(nil, 3, 7, 10, 0, 5, "", 0)
	ops := Operations(h, 100)
	if len(ops) != 1 {
		t.Fatalf("%d operations, want 1", len(ops))
	}
	out := ops[0].Output.(CSOutput)
	if out.Status != Unknown || !out.ReadKnown || out.Read != 5 || ops[0].Return != 100 {
		t.Fatalf("got %+v returning at %d, want unknown, read 5, returning at the end", out, ops[0].Return)
	}
}

func TestCounterexampleHTMLNamesOverlap(t *testing.T) {
	h := cs(cs(nil, 0, 1, 10, 30, 0, OK, 0), 1, 1, 15, 40, 0, OK, 0)
	h = append(h, Event{Kind: Fault, Time: 12, End: 25, Text: "SIGSTOP client 0"})
	r := Check(h, 5*time.Second)
	path, err := r.WriteHTML(filepath.Join(t.TempDir(), "x.html"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script := expandTimeline(t, b)
	for _, want := range []string{"client 0: read 0, wrote 1", "client 1: read 0, wrote 1", "SIGSTOP client 0"} {
		if !strings.Contains(script, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
}

func TestReadEventsToleratesCutLastLine(t *testing.T) {
	in := `{"kind":"call","t":1,"client":0,"op":1}
{"kind":"read","t":2,"client":0,"op":1,"value":3}
{"kind":"ret`
	ev, err := ReadEvents(strings.NewReader(in))
	if err != nil || len(ev) != 2 {
		t.Fatalf("got %d events, %v; want 2, nil", len(ev), err)
	}
	if _, err := ReadEvents(strings.NewReader("garbage\n" + `{"kind":"call","t":1}` + "\n")); err == nil {
		t.Fatal("a malformed line in the middle was accepted")
	}
}
