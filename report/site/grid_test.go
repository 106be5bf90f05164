package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
)

// TestFrontPageByTopology: each cell is in its topology's table and no
// other, in its scenario's fault family, saying how many runs exercised
// its fault when its verdict counts them (safe, not exercised): in the
// table when fewer than all did, on hover always, and never for a cell
// whose matrix did not count them.
func TestFrontPageByTopology(t *testing.T) {
	cell := func(impl, topo, sc string, fenced bool, v checker.Verdict, exercised int) record.Cell {
		return record.Cell{Impl: impl, Topology: topo, Scenario: sc, Fencing: fenced, Verdict: v, Expected: v,
			Runs: 3, RunVerdicts: []checker.Verdict{v, v, v}, Seeds: []int64{1, 2, 3}, ExercisedRuns: exercised}
	}
	risks := map[string]checker.Risk{"contention": checker.RiskContention, "pause-past-ttl": checker.RiskAtExpiry,
		"leader-isolated": checker.RiskAtStrike, "holder-crash": checker.RiskRecovery}
	uncounted := cell("etcd-lock", "", "holder-crash", false, checker.Safe, 0)
	tests := []struct {
		name   string
		cell   record.Cell
		grid   string // the table it must be in
		family string // the column group over its scenario
		shows  []string
		hides  string // what its entry must not say
	}{
		{"a safe cell on the single servers, every run exercised", cell("redis-setnx-px", "", "pause-past-ttl", false, checker.Safe, 3),
			"on-single", "the holder stalls", []string{">safe</a>", "safe (3 of 3 exercised), expected safe"}, ""},
		{"its fenced twin, in the same column", cell("redis-setnx-px", "", "pause-past-ttl", true, checker.Unsafe, 3),
			"on-single", "the holder stalls", []string{"fenced: unsafe"}, "exercised"},
		{"a not-exercised cell on an ensemble", cell("zookeeper", "zk-ensemble", "leader-isolated", false, checker.NotExercised, 1),
			"on-zk-ensemble", "the servers lose the lock", []string{">not exercised <span class=\"ex\">(1 of 3 exercised)</span>"}, ""},
		{"a safe cell that rests on fewer than all its runs", cell("zookeeper", "zk-ensemble", "contention", false, checker.Safe, 2),
			"on-zk-ensemble", "no fault", []string{">safe <span class=\"ex\">(2 of 3 exercised)</span>"}, ""},
		{"a cell from a matrix that did not count", uncounted,
			"on-single", "a client dies or waits", []string{">safe</a>"}, "exercised"},
	}
	var m []record.Cell
	for _, tc := range tests {
		m = append(m, tc.cell)
	}
	dir := t.TempDir()
	r := &Results{Dir: dir, Matrix: m}
	r.markUncounted(uncounted)
	out := filepath.Join(dir, "site")
	_, err := Write(out, r, Options{Out: out, Repo: dir, MatrixTTL: time.Second,
		Describe: func(c record.Cell, _ time.Duration) (Scenario, bool) {
			risk, ok := risks[c.Scenario]
			return Scenario{Risk: risk}, ok
		}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	grids := panels(string(b))
	if len(grids) != 2 {
		t.Fatalf("the front page has tables %v, want one for single and one for zk-ensemble", keys(grids))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			href := `href="` + cellPage(tc.cell) + `"`
			for id, html := range grids {
				if in := strings.Contains(html, href); in != (id == tc.grid) {
					t.Errorf("in table %s: %v, want %v", id, in, id == tc.grid)
				}
			}
			html := grids[tc.grid]
			entry := entryOf(html, href)
			for _, s := range tc.shows {
				if !strings.Contains(entry, s) {
					t.Errorf("its entry %q does not say %q", entry, s)
				}
			}
			if tc.hides != "" && strings.Contains(entry, tc.hides) {
				t.Errorf("its entry %q says %q", entry, tc.hides)
			}
			if col := familyOver(html, tc.cell.Scenario); col != tc.family {
				t.Errorf("its column %s is under %q, want %q", tc.cell.Scenario, col, tc.family)
			}
		})
	}
}

// panels splits the front page into its topology tables, by id.
func panels(page string) map[string]string {
	out := map[string]string{}
	const open = `<section class="panel" id="`
	for _, part := range strings.Split(page, open)[1:] {
		id, rest, _ := strings.Cut(part, `"`)
		body, _, _ := strings.Cut(rest, "</section>")
		out[id] = body
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// entryOf is the link of one cell in a table, from its href to its end.
func entryOf(html, href string) string {
	_, rest, ok := strings.Cut(html, href)
	if !ok {
		return ""
	}
	entry, _, _ := strings.Cut(rest, "</a>")
	return entry + "</a>"
}

// familyOver is the family heading over a scenario's column: the heads
// span the columns in order.
func familyOver(html, scenario string) string {
	headRow, rest, _ := strings.Cut(html, "</tr>")
	colRow, _, _ := strings.Cut(rest, "</tr>")
	var cols []string
	for _, part := range strings.Split(colRow, `<th class="sc">`)[1:] {
		name, _, _ := strings.Cut(part, "</th>")
		cols = append(cols, name)
	}
	i := 0
	for _, part := range strings.Split(headRow, `<th class="fam" colspan="`)[1:] {
		span, rest, _ := strings.Cut(part, `"`)
		_, rest, _ = strings.Cut(rest, ">")
		name, _, _ := strings.Cut(rest, "</th>")
		n := 0
		for _, c := range span {
			n = n*10 + int(c-'0')
		}
		for j := i; j < i+n && j < len(cols); j++ {
			if cols[j] == scenario {
				return name
			}
		}
		i += n
	}
	return ""
}
