package lessons

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

func TestMain(m *testing.M) {
	// No test here runs a fault scenario, but the binary links the
	// scenarios package, whose workers are re-executed copies of it.
	runner.MaybeRunWorker()
	// Stops every server; a lab dir left behind fails the binary.
	os.Exit(cluster.EndOfTests(m.Run()))
}

const ms = int64(1e6)

// history builds a small hand-made run: client 0 reads 0 and is paused
// past its lease; client 1 takes the lock, reads 0 too and writes 1; client
// 0 wakes and writes 1 over it (a lost update); client 2 then presents a
// stale token and is refused.
func history() []lin.Event {
	return []lin.Event{
		{Kind: lin.Acquired, Time: 1 * ms, Client: 0, Token: 1},
		{Kind: lin.Call, Time: 2 * ms, Client: 0, Op: 1, Token: 1},
		{Kind: lin.Read, Time: 3 * ms, Client: 0, Op: 1, Token: 1, Value: 0},
		lin.FaultEvent(4*ms, 3000*ms, lin.Injection{Kind: nemesis.ClientPause, Target: "client-0", Clients: []int{0}, Note: "SIGSTOP; SIGCONT"}, "SIGSTOP client 0 for 3s"),
		{Kind: lin.Acquired, Time: 1100 * ms, Client: 1, Token: 2},
		{Kind: lin.Call, Time: 1101 * ms, Client: 1, Op: 1, Token: 2},
		{Kind: lin.Read, Time: 1102 * ms, Client: 1, Op: 1, Token: 2, Value: 0},
		{Kind: lin.Return, Time: 1104 * ms, Client: 1, Op: 1, Token: 2, Value: 1, Status: lin.OK},
		{Kind: lin.Released, Time: 1105 * ms, Client: 1},
		{Kind: lin.Return, Time: 3001 * ms, Client: 0, Op: 1, Token: 1, Value: 1, Status: lin.OK},
		{Kind: lin.Released, Time: 3002 * ms, Client: 0},
		{Kind: lin.Acquired, Time: 3003 * ms, Client: 2, Token: 1},
		{Kind: lin.Call, Time: 3004 * ms, Client: 2, Op: 1, Token: 1},
		{Kind: lin.Return, Time: 3005 * ms, Client: 2, Op: 1, Token: 1, Status: lin.Refused},
		{Kind: lin.Released, Time: 3006 * ms, Client: 2},
	}
}

func TestSections(t *testing.T) {
	got := Sections(history())
	tests := []struct {
		client   int
		label    string
		status   lin.Status
		conflict bool
	}{
		{0, "r0 w1 #1", lin.OK, true},
		{1, "r0 w1 #2", lin.OK, true},
		{2, "refused #1", lin.Refused, false},
	}
	if len(got) != len(tests) {
		t.Fatalf("got %d sections, want %d: %+v", len(got), len(tests), got)
	}
	for i, tt := range tests {
		s := got[i]
		if s.Client != tt.client || label(s) != tt.label || s.Status != tt.status || s.Conflict != tt.conflict {
			t.Errorf("section %d = client %d %q %s conflict=%v; want client %d %q %s conflict=%v",
				i, s.Client, label(s), s.Status, s.Conflict, tt.client, tt.label, tt.status, tt.conflict)
		}
	}
}

// TestKilledClient: a section its client never finished ends where that
// client was killed, and the kill is drawn on the struck client's row. The
// fault is recorded as the engine records it: the nemesis's kind, the
// target as the step named it (a slot, or holder) and the client id struck,
// which is not the slot's number once a killed client was replaced. The
// timeline once matched the scripted wording ("SIGKILL client 3") and drew
// every nemesis kill over every row, with the dead section running on.
func TestKilledClient(t *testing.T) {
	tests := []struct {
		name   string
		target string
	}{
		{"aimed at the holder", nemesis.HolderTarget},
		{"aimed at a slot whose first client was replaced", "client-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kill := lin.FaultEvent(5*ms, 600*ms, lin.Injection{Kind: nemesis.ClientKill, Target: tc.target,
				Clients: []int{3}, Note: "SIGKILL; replaced by client 5"}, "")
			evs := []lin.Event{
				{Kind: lin.Acquired, Time: 1 * ms, Client: 3},
				{Kind: lin.Call, Time: 1 * ms, Client: 3, Op: 1},
				{Kind: lin.Read, Time: 2 * ms, Client: 3, Op: 1, Value: 7},
				kill,
				{Kind: lin.Acquired, Time: 900 * ms, Client: 1},
				{Kind: lin.Call, Time: 901 * ms, Client: 1, Op: 1},
				{Kind: lin.Read, Time: 902 * ms, Client: 1, Op: 1, Value: 7},
				{Kind: lin.Return, Time: 903 * ms, Client: 1, Op: 1, Value: 8, Status: lin.OK},
				{Kind: lin.Released, Time: 904 * ms, Client: 1},
			}
			got := Sections(evs)
			if len(got) != 2 || got[0].End != 5*ms || got[0].Status != lin.Unknown {
				t.Fatalf("killed section = %+v, want it to end at the kill with an unknown outcome", got)
			}
			if got[0].Conflict || got[1].Conflict {
				t.Errorf("a dead client's unfinished section conflicts with no later one: %+v", got)
			}
			// The fault's span covers one row, client 3's, not both.
			svg := Timeline(evs, TimelineOptions{Title: "kill"})
			rows := regexp.MustCompile(`<text x="8" y="([0-9.]+)" fill="#333">client (\d+)</text>`).FindAllStringSubmatch(svg, -1)
			fault := regexp.MustCompile(`<rect class="fault" x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)"`).FindStringSubmatch(svg)
			if len(rows) != 2 || fault == nil {
				t.Fatalf("want two client rows and one fault span, got rows %v, fault %v", rows, fault)
			}
			rowH := mustFloat(t, rows[1][1]) - mustFloat(t, rows[0][1])
			if h := mustFloat(t, fault[2]); h > rowH+0.5 {
				t.Errorf("the kill spans %.1f px, more than one row (%.1f px): drawn over every client", h, rowH)
			}
			struck := rows[0]
			if struck[2] != "3" {
				struck = rows[1]
			}
			if y, top := mustFloat(t, fault[1]), mustFloat(t, struck[1]); y > top || y+rowH < top {
				t.Errorf("the kill is drawn at y=%.1f, not on client 3's row (label at y=%.1f)", y, top)
			}
		})
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTimelineSVG renders the hand-built history and checks that the SVG is
// well-formed and shows what the history holds.
func TestTimelineSVG(t *testing.T) {
	svg := Timeline(history(), TimelineOptions{Title: "hand-built", Note: "a note"})
	dec := xml.NewDecoder(strings.NewReader(svg))
	counts := map[string]int{}
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			for _, a := range el.Attr {
				if a.Name.Local == "class" {
					counts[a.Value]++
				}
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(el)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"hand-built", "client 0", "client 1", "client 2", "r0 w1 #1", "r0 w1 #2", "refused #1", "SIGSTOP client 0 for 3s", "a note"} {
		if !strings.Contains(all, want) {
			t.Errorf("SVG text lacks %q; texts:\n%s", want, all)
		}
	}
	for class, want := range map[string]int{"section": 3, "fault": 1, "acquired": 3, "released": 3} {
		if counts[class] != want {
			t.Errorf("%d elements of class %q, want %d", counts[class], class, want)
		}
	}
	// The 1.9 s of the pause with nothing else happening is cut out.
	if counts["break"] == 0 {
		t.Errorf("no time break drawn across the quiet part of the pause")
	}
	if n := strings.Count(svg, `fill="#f8a5a5"`); n < 2+1 { // two conflicting bars + the legend swatch
		t.Errorf("conflicting sections not drawn in red (%d red fills)", n)
	}
}

func TestRewriteKeepsProse(t *testing.T) {
	page := "intro\n<!-- generated:a -->\nold\n<!-- /generated -->\nmiddle\n<!-- generated:b -->\n<!-- /generated -->\nend\n"
	got, err := Rewrite(page, map[string]string{"a": "new A", "b": "new B"})
	if err != nil {
		t.Fatal(err)
	}
	want := "intro\n<!-- generated:a -->\nnew A\n<!-- /generated -->\nmiddle\n<!-- generated:b -->\nnew B\n<!-- /generated -->\nend\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := Rewrite(page, map[string]string{"c": "x"}); err == nil {
		t.Errorf("a block with no marker in the page was silently dropped")
	}
}

// TestPagesAreRunnable: every run and cell a page declares is a real,
// applicable implementation × scenario.
func TestPagesAreRunnable(t *testing.T) {
	// The pages are generated from local-mode runs (some need the lab's
	// hosts, which container mode has not), so they are judged as there.
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal)
	if err := CheckPages(); err != nil {
		t.Fatal(err)
	}
}

var (
	implFlagRe     = regexp.MustCompile(`-impl[ =]([A-Za-z0-9_,.-]+)`)
	scenarioFlagRe = regexp.MustCompile(`-scenario[ =]([A-Za-z0-9_,.-]+)`)
	topologyFlagRe = regexp.MustCompile(`-topology[ =]([A-Za-z0-9_,.-]+)`)
	backtickRe     = regexp.MustCompile("`([^`\n]+)`")
	kebabRe        = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)+$`)
	benchCmdRe     = regexp.MustCompile(`(?:go run \./cmd/bench|` + "`" + `bench) ([a-z]+)((?: +-[A-Za-z0-9=.,_-]+(?: +[^-\s][^\s` + "`" + `]*)?)*)`)
	flagRe         = regexp.MustCompile(`(?:^|\s)-{1,2}([A-Za-z][A-Za-z0-9-]*)`)
	makeRe         = regexp.MustCompile("`make ([a-z-]+)`")
	linkRe         = regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)]*)?\)`)
	usageFlagRe    = regexp.MustCompile(`(?m)^\s+-([A-Za-z][A-Za-z0-9-]*)`)
)

// otherKebab are hyphenated words the pages may put in backticks that are
// neither implementations nor scenarios: capabilities and figure names.
var otherKebab = map[string]bool{
	"lost-notify": true, "no-polling": true, "recovery-ms": true, "grants-minority-cut": true,
	"grants-majority-cut": true, "no-run": true,
}

// TestPagesNameRealThings fails when a lesson names an implementation,
// scenario, bench subcommand or flag, make target or linked file that does
// not exist.
func TestPagesNameRealThings(t *testing.T) {
	dir := filepath.Join("..", "docs", "lessons")
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no lesson pages in %s (%v)", dir, err)
	}
	implSet, scenarioSet := set(impls.Names()), set(scenarios.Names())
	// Topologies count as scenarios do: a real name in backticks or after
	// -topology.
	topoSet := set(topology.NamedNames())
	makefile, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	flagsOf := benchFlags(t)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range problems(string(b), dir, implSet, scenarioSet, topoSet, makefile, flagsOf) {
			t.Errorf("%s: %s", filepath.Base(p), msg)
		}
	}
	// The check itself must catch a page that drifted from the code.
	bad := "Run `go run ./cmd/bench check -impl redis-nope -topology zk-nowhere -scenario contention -colour` or `bench frobnicate`; " +
		"see `redis-setnx-pz`, `make nothing-here` and [the code](../../impls/nope.go)."
	got := strings.Join(problems(bad, dir, implSet, scenarioSet, topoSet, makefile, flagsOf), "\n")
	for _, want := range []string{"redis-nope", "zk-nowhere", "-colour", "frobnicate", "redis-setnx-pz", "nothing-here", "nope.go"} {
		if !strings.Contains(got, want) {
			t.Errorf("a page naming %q passed the check; problems found:\n%s", want, got)
		}
	}
}

// problems lists every name in a page's text that does not exist.
func problems(text, dir string, implSet, scenarioSet, topoSet map[string]bool, makefile []byte, flagsOf func(string) (map[string]bool, bool)) []string {
	var out []string
	for _, m := range implFlagRe.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if !implSet[n] {
				out = append(out, fmt.Sprintf("-impl %s: no such implementation", n))
			}
		}
	}
	for _, m := range scenarioFlagRe.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if !scenarioSet[n] {
				out = append(out, fmt.Sprintf("-scenario %s: no such scenario", n))
			}
		}
	}
	for _, m := range topologyFlagRe.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if !topoSet[n] {
				out = append(out, fmt.Sprintf("-topology %s: no such topology", n))
			}
		}
	}
	for _, m := range backtickRe.FindAllStringSubmatch(text, -1) {
		w := m[1]
		if kebabRe.MatchString(w) && !implSet[w] && !scenarioSet[w] && !topoSet[w] && !otherKebab[w] && glossaryEntry(w) == "" {
			out = append(out, fmt.Sprintf("`%s` is neither an implementation nor a scenario", w))
		}
	}
	for _, m := range benchCmdRe.FindAllStringSubmatch(text, -1) {
		sub, flags := m[1], m[2]
		known, ok := flagsOf(sub)
		if !ok {
			out = append(out, fmt.Sprintf("`bench %s`: no such subcommand", sub))
			continue
		}
		for _, f := range flagRe.FindAllStringSubmatch(flags, -1) {
			if !known[f[1]] {
				out = append(out, fmt.Sprintf("`bench %s -%s`: no such flag", sub, f[1]))
			}
		}
	}
	for _, m := range makeRe.FindAllStringSubmatch(text, -1) {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `:`).Match(makefile) {
			out = append(out, fmt.Sprintf("`make %s`: no such Makefile target", m[1]))
		}
	}
	for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil {
			out = append(out, fmt.Sprintf("link to %s: %v", target, err))
		}
	}
	return out
}

func set(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// benchFlags builds the real command once and asks each subcommand for its
// flags, so a page cannot name a flag the command does not have.
func benchFlags(t *testing.T) func(sub string) (map[string]bool, bool) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bench")
	build := exec.Command("go", "build", "-o", bin, "../cmd/bench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build cmd/bench: %v\n%s", err, out)
	}
	cache := map[string]map[string]bool{}
	return func(sub string) (map[string]bool, bool) {
		if f, ok := cache[sub]; ok {
			return f, f != nil
		}
		out, _ := exec.Command(bin, sub, "-h").CombinedOutput()
		s := string(out)
		var flags map[string]bool
		switch {
		case strings.Contains(s, "unknown command"):
		case sub == "list" || sub == "help":
			flags = map[string]bool{}
		default:
			flags = set(nil)
			for _, m := range usageFlagRe.FindAllStringSubmatch(s, -1) {
				flags[m[1]] = true
			}
		}
		cache[sub] = flags
		return flags, flags != nil
	}
}

// TestEveryLockDeclaresItsPage: the index promises every lock of the lab a
// page, its own or the one that covers it, and the lock names it in its
// impls.Spec: a page of Pages that runs, quotes or explains it, and the
// page that leads with it where one does.
func TestEveryLockDeclaresItsPage(t *testing.T) {
	leads := map[string]string{}
	for _, p := range Pages {
		if len(p.Impls) > 0 {
			if _, dup := leads[p.Impls[0]]; !dup {
				leads[p.Impls[0]] = p.File
			}
		}
	}
	for _, s := range impls.All() {
		if s.Guest {
			continue // a guest's page is docs/guests/README.md (impls/guest's TestEveryGuestHasARow)
		}
		t.Run(s.Name, func(t *testing.T) {
			page := PageFor(s.Name)
			switch {
			case page == "" || !strings.HasPrefix(s.Page, lessonsDir):
				t.Fatalf("Page %q: declare the lesson that covers it (%s...) in its impls.Spec", s.Page, lessonsDir)
			case !slices.Contains(pagesCovering(s.Name), page):
				t.Errorf("Page %q, but that page neither runs, quotes nor explains it (pages that do: %v)", s.Page, pagesCovering(s.Name))
			case leads[s.Name] != "" && leads[s.Name] != page:
				t.Errorf("Page %q, but %s leads with it", s.Page, leads[s.Name])
			}
		})
	}
}
