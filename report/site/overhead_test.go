package site_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report/site"
)

// The guest protocol's cost (bench.json's protocol_overhead, bench.md's
// "What the guest protocol costs") is on the front page's benchmark and on
// the pages of the guest and of the lock it wraps, as the JSON says it,
// and nowhere when the run did not measure it.
func TestProtocolOverheadShown(t *testing.T) {
	const guest, native, other = "guest:lab-redis-setnx-px", "redis-setnx-px", "zookeeper"
	lo, hi := 0.75, 0.85
	measured := []record.ProtocolOverhead{{Guest: guest, Native: native, Workload: "uncontended",
		GuestPairs:  record.Stat{Median: 3210, Trials: []float64{3210}},
		NativePairs: record.Stat{Median: 4012, Trials: []float64{4012}},
		Ratio:       record.Stat{Median: 0.8, CILo: &lo, CIHi: &hi, Trials: []float64{0.8}}}}
	const heading, row = "What the guest protocol costs", "<td class=\"num\">3210</td><td class=\"num\">4012</td><td class=\"num\">0.8 [0.75, 0.85]×</td>"
	tests := []struct {
		name     string
		overhead []record.ProtocolOverhead
		// want says, per page (a lock's name, or "index"), whether it shows
		// the cost.
		want map[string]bool
	}{
		{"measured", measured, map[string]bool{"index": true, guest: true, native: true, other: false}},
		{"not measured", nil, map[string]bool{"index": false, guest: false, native: false, other: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var cells []record.Cell
			for i, impl := range []string{guest, native, other} {
				cells = append(cells, record.Cell{Impl: impl, Scenario: "contention", Verdict: "safe", Expected: "safe",
					RunVerdicts: []checker.Verdict{"safe"}, Seeds: []int64{int64(i)}})
			}
			r := &site.Results{Dir: dir, Matrix: cells, Bench: &record.Bench{Date: "2026-11-26", Command: "bench", Overhead: tt.overhead}}
			out := filepath.Join(dir, "site")
			pages, err := site.Write(out, r, site.Options{Out: out, Repo: dir, MatrixTTL: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for page, want := range tt.want {
				file := "index.html"
				if page != "index" {
					file = lockPageFile(t, pages, page)
				}
				b, err := os.ReadFile(filepath.Join(out, file))
				if err != nil {
					t.Fatal(err)
				}
				html := string(b)
				if got := strings.Contains(html, heading) && strings.Contains(html, row); got != want {
					t.Errorf("%s shows the protocol's cost (%q with the row %q): %v, want %v", file, heading, row, got, want)
				}
				if !want && strings.Contains(html, heading) {
					t.Errorf("%s has the heading %q with nothing measured", file, heading)
				}
			}
		})
	}
}

// lockPageFile is lock's page among the pages Write wrote.
func lockPageFile(t *testing.T, pages []string, lock string) string {
	t.Helper()
	if want := "locks/" + lock + ".html"; slices.Contains(pages, want) {
		return want
	}
	t.Fatalf("no page of %s among %v", lock, pages)
	return ""
}
