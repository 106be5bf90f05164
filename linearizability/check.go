package linearizability

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
)

// Result is the outcome of checking one history.
type Result struct {
	Outcome porcupine.CheckResult // Ok, Illegal or Unknown (timed out)
	Ops     int                   // critical sections checked
	Unknown int                   // of which with an unknown outcome
	Elapsed time.Duration

	model  porcupine.Model
	info   porcupine.LinearizationInfo
	events []Event
}

// Check runs porcupine over the history's critical sections, giving up
// after timeout (Outcome Unknown).
func Check(events []Event, timeout time.Duration) Result {
	SortEvents(events)
	var end int64
	if len(events) > 0 {
		end = events[len(events)-1].Time + 1
	}
	ops := Operations(events, end)
	model := CounterModel.ToModel()
	start := time.Now()
	outcome, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	r := Result{Outcome: outcome, Ops: len(ops), Elapsed: time.Since(start), model: model, info: info, events: events}
	for _, op := range ops {
		if op.Output.(CSOutput).Status == Unknown {
			r.Unknown++
		}
	}
	return r
}

// Linearizable reports whether the history passed.
func (r Result) Linearizable() bool { return r.Outcome == porcupine.Ok }

// WriteHTML writes porcupine's interactive timeline, with lock grants,
// releases and faults drawn on it, compact (CompactTimeline), and returns
// the file's absolute path.
func (r Result) WriteHTML(path string) (string, error) {
	r.info.AddAnnotations(Annotations(r.events))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("make dir for %s: %w", path, err)
	}
	var page bytes.Buffer
	if err := porcupine.Visualize(r.model, r.info, &page); err != nil {
		return "", fmt.Errorf("write timeline %s: %w", path, err)
	}
	compact, _, err := CompactTimeline(page.Bytes())
	if err != nil {
		return "", fmt.Errorf("write timeline %s: %w", path, err)
	}
	if err := os.WriteFile(path, compact, 0o644); err != nil {
		return "", fmt.Errorf("write timeline: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path, nil
	}
	return abs, nil
}

// Annotations turns faults into a row of their own ("faults"), the
// checker's danger windows into another ("danger window"), and lock
// grants and releases into marks on each client's row.
func Annotations(events []Event) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, e := range events {
		switch e.Kind {
		case Fault:
			end := e.End
			if end < e.Time {
				end = e.Time
			}
			out = append(out, porcupine.Annotation{Tag: "faults", Start: e.Time, End: end,
				Description: e.Text, Details: e.Text, BackgroundColor: "#f4b6b6"})
		case Acquired:
			d := "acquired"
			if e.Token != 0 {
				d = fmt.Sprintf("acquired token %d", e.Token)
			}
			out = append(out, porcupine.Annotation{ClientId: e.Client, Start: e.Time, Description: d,
				Details: fmt.Sprintf("client %d %s", e.Client, d), BackgroundColor: "#c8e6c9"})
		case Released:
			d := "released"
			if e.Text != "" {
				d += ": " + e.Text
			}
			out = append(out, porcupine.Annotation{ClientId: e.Client, Start: e.Time, Description: "released",
				Details: fmt.Sprintf("client %d %s", e.Client, d), BackgroundColor: "#bbdefb"})
		case Danger:
			out = append(out, porcupine.Annotation{Tag: "danger window", Start: e.Time, End: max(e.End, e.Time),
				Description:     fmt.Sprintf("client %d unprotected; %d acts of others", e.Client, e.Value),
				Details:         fmt.Sprintf("danger window of client %d's claim (%s): %d acts of other clients inside", e.Client, e.Text, e.Value),
				BackgroundColor: "#fff59d"})
		case Lost:
			out = append(out, porcupine.Annotation{ClientId: e.Client, Start: e.Time, Description: "told: lost",
				Details: fmt.Sprintf("client %d: its lock said the lock was lost", e.Client), BackgroundColor: "#ffe0b2"})
		}
	}
	return out
}
