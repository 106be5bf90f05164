package site

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	lin "github.com/locklab/locklab/linearizability"
)

// timelinePage is a porcupine timeline as porcupine writes it, small.
const timelinePage = "<html><head><title>Porcupine</title></head><body><div id=\"canvas\"></div>\n<script>\nconst data = {}\nrender(data)\n</script>\n</body></html>\n"

// TestLightenKeepsWhatTheTablesLink: a results dir with files no table
// links, a plain history and a loose timeline comes out with only the
// linked files, the history gzipped under a name the tables now link and
// the timeline compact; the tables change in those names alone, and a
// second pass finds nothing to do.
func TestLightenKeepsWhatTheTablesLink(t *testing.T) {
	cell := `[{"impl":"guest:x","scenario":"contention","verdict":"unsafe","expected":"unsafe","runs":1,"run_verdicts":["unsafe"],"seeds":[1],` +
		`"counterexample":"counterexamples/guest:x-seed1.html","history":"counterexamples/guest:x-seed1.history.jsonl"}]`
	md := "| guest:x | [timeline](counterexamples/guest:x-seed1.html), [history](counterexamples/guest:x-seed1.history.jsonl) |\n"
	row := `{"seed":1,"rows":[{"impl":"none","verdict":"unsafe","schedule":"none-seed1.schedule.json","history":"none-seed1.history.jsonl","timeline":"none-seed1.html"}]}`
	readme := "[schedule](none-seed1.schedule.json), [history](none-seed1.history.jsonl), [timeline](none-seed1.html)\n"
	dir := writeFiles(t, map[string]string{
		"correctness.json":                            cell,
		"correctness.md":                              md,
		"counterexamples/guest:x-seed1.html":          timelinePage,
		"counterexamples/guest:x-seed1.history.jsonl": `{"kind":"call","t":1}` + "\n",
		"counterexamples/guest:x-seed9.html":          timelinePage,
		"counterexamples/guest:x-seed9.history.jsonl": `{"kind":"call","t":1}` + "\n",
		"explore/explore.json":                        row,
		"explore/README.md":                           readme,
		"explore/none-seed1.schedule.json":            "{}",
		"explore/none-seed1.history.jsonl":            `{"kind":"call","t":1}` + "\n",
		"explore/none-seed1.html":                     timelinePage,
		"explore/none-seed2.schedule.json":            "{}",
		"explore/none-seed2.history.jsonl.gz":         "stale",
		"site/index.html":                             "<html><head><title>locklab</title></head></html>",
	})
	x, err := Lighten(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantExcess := Excess{
		Unlinked: []string{"counterexamples/guest:x-seed9.history.jsonl", "counterexamples/guest:x-seed9.html",
			"explore/none-seed2.history.jsonl.gz", "explore/none-seed2.schedule.json"},
		Plain: []string{"counterexamples/guest:x-seed1.history.jsonl", "explore/none-seed1.history.jsonl"},
		Loose: []string{"counterexamples/guest:x-seed1.html", "explore/none-seed1.html"},
	}
	for _, l := range []struct {
		name      string
		got, want []string
	}{{"unlinked", x.Unlinked, wantExcess.Unlinked}, {"plain", x.Plain, wantExcess.Plain}, {"loose", x.Loose, wantExcess.Loose}} {
		if !slices.Equal(l.got, l.want) {
			t.Errorf("%s: %q, want %q", l.name, l.got, l.want)
		}
	}
	files, err := keptFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"counterexamples/guest:x-seed1.history.jsonl.gz", "counterexamples/guest:x-seed1.html",
		"explore/none-seed1.history.jsonl.gz", "explore/none-seed1.html", "explore/none-seed1.schedule.json"}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("after Lighten the dir keeps %q, want %q", files, wantFiles)
	}
	for name, want := range map[string]string{
		"correctness.json":     strings.Replace(cell, ".history.jsonl", ".history.jsonl.gz", 1),
		"correctness.md":       strings.Replace(md, ".history.jsonl", ".history.jsonl.gz", 1),
		"explore/explore.json": strings.Replace(row, ".history.jsonl", ".history.jsonl.gz", 1),
		"explore/README.md":    strings.Replace(readme, ".history.jsonl", ".history.jsonl.gz", 1),
		"site/index.html":      "<html><head><title>locklab</title></head></html>",
	} {
		if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); string(b) != want {
			t.Errorf("%s after Lighten:\n%s\nwant\n%s", name, b, want)
		}
	}
	events, err := lin.ReadEventsFile(filepath.Join(dir, "explore", "none-seed1.history.jsonl.gz"))
	if err != nil || len(events) != 1 {
		t.Errorf("gzipped history reads back %d events, %v; want 1", len(events), err)
	}
	if again, err := Lighten(dir); err != nil || !again.Empty() {
		t.Errorf("a second Lighten found %v (%v), want nothing", again, err)
	}
}

// TestCommittedResultsLinkEveryKeptFile: the committed results/ holds no
// history, schedule or timeline its tables do not link, no plain history
// and no loose timeline, and every file the tables link is there; `go run
// ./cmd/bench report` makes it so.
func TestCommittedResultsLinkEveryKeptFile(t *testing.T) {
	dir := filepath.Join("..", "..", "results")
	if _, err := os.Stat(filepath.Join(dir, CorrectnessFile)); err != nil {
		t.Skipf("no committed results: %v", err)
	}
	x, err := FindExcess(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Empty() {
		t.Errorf("results/ holds %v (run `go run ./cmd/bench report`): unlinked %q, plain %q, loose %q",
			x, first(x.Unlinked), first(x.Plain), first(x.Loose))
	}
}

// first is at most the first three of a list, for a message.
func first(l []string) []string { return l[:min(len(l), 3)] }
