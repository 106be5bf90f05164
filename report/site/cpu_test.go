package site_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report/site"
)

// A lock's page shows CPU per contended pair, the clients' and the
// servers', as bench.json has them, and a dash where the run did not
// measure them (a run from before, or servers the lab did not start).
func TestCPUPerPairShown(t *testing.T) {
	one := func(x float64) record.Stat { return record.Stat{Median: x, Trials: []float64{x}} }
	server := one(61.5)
	impls := []record.BenchResult{
		{Name: "redis-setnx-px", Backend: "redis", Contended: &record.ContendedR{PairsPerSec: one(2000),
			CPU: &record.CPUPerPair{Clients: one(212), Servers: &server}}},
		{Name: "peer-redislock", Backend: "redis", Peer: true, Contended: &record.ContendedR{PairsPerSec: one(1900)}},
	}
	dir := t.TempDir()
	var cells []record.Cell
	for i, r := range impls {
		cells = append(cells, record.Cell{Impl: r.Name, Scenario: "contention", Verdict: "safe", Expected: "safe",
			RunVerdicts: []checker.Verdict{"safe"}, Seeds: []int64{int64(i)}})
	}
	r := &site.Results{Dir: dir, Matrix: cells, Bench: &record.Bench{Date: "2026-11-26", Command: "bench", Impls: impls}}
	out := filepath.Join(dir, "site")
	pages, err := site.Write(out, r, site.Options{Out: out, Repo: dir, MatrixTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, lockPageFile(t, pages, "redis-setnx-px")))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		`<td class="num">212</td><td class="num">61.5</td>`, // measured: both sides
		`<td class="num">–</td><td class="num">–</td>`,      // the peer's run measured none
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the lock's speed table lacks %s", want)
		}
	}
}
