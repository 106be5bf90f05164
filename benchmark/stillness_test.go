package benchmark

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/record"
)

func rates(name string, peer bool, unc ...float64) record.BenchResult {
	return record.BenchResult{Name: name, Peer: peer, Backend: "redis", Uncontended: &record.UncontendedR{PairsPerSec: NewStat(unc)}}
}

// A lock of ours is compared with the fastest peer on its backend, not
// the closest, and called ahead only when the whole interval of the
// per-trial ratio clears 1.0.
func TestBestPeerSection(t *testing.T) {
	rep := &record.Bench{Impls: []record.BenchResult{
		rates("redis-setnx-px", false, 1100, 1210, 990, 1100, 1045, 1155, 1100, 1210),
		rates("peer-slow", true, 500, 500, 500, 500, 500, 500, 500, 500),
		rates("peer-fast", true, 1000, 1100, 900, 1000, 950, 1050, 1000, 1100),
		rates("redis-del-release", false, 9000, 9000, 9000, 9000, 9000, 9000, 9000, 9000),
	}}
	rep.Impls[3].Broken = "release is a plain DEL" // broken: not judged
	var b strings.Builder
	bestPeerSection(rep, func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
	got := b.String()
	if want := "| `redis-setnx-px` | uncontended | `peer-fast` | 1.10× | ahead |"; !strings.Contains(got, want) {
		t.Errorf("want the row %q in:\n%s", want, got)
	}
	if strings.Contains(got, "redis-del-release") {
		t.Errorf("a broken lock was judged against the peers:\n%s", got)
	}
}

// Each headline figure beyond ±10% is named with its cause: the machine
// when the round-trip limit moved as much, the lock when it held still.
func TestStillnessSection(t *testing.T) {
	still := []float64{1000, 1010, 990, 1000, 1005, 995, 1000, 1000}
	moving := []float64{1000, 1400, 700, 1000, 1300, 800, 1000, 1200}
	for _, c := range []struct {
		name  string
		limit []float64
		want  string
	}{
		{"the machine moved", moving, "the machine: the servers' own round-trip limit moved"},
		{"the machine held", still, "the lock itself: the servers' round-trip limit held to ±1%"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &record.Bench{
				Limits: []record.Limit{{Backend: "redis", OneClient: NewStat(c.limit), Clients: 8, NClients: NewStat(still)}},
				Impls:  []record.BenchResult{rates("redis-setnx-px", false, moving...)},
			}
			var b strings.Builder
			stillnessSection(rep, func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
			got := b.String()
			if !strings.Contains(got, c.want) || !strings.Contains(got, "| uncontended pairs/s | `redis-setnx-px` |") {
				t.Errorf("want the lock's rate flagged with %q in:\n%s", c.want, got)
			}
		})
	}
}
