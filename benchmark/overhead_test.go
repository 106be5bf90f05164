package benchmark

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/record"
)

// The protocol's cost is shown as the guest's pairs/s over the native
// lock's, trial by trial, and only when the run measured both; a bench.json
// that carries it (Overhead) is shown as it says.
func TestOverheadSection(t *testing.T) {
	uncontended := func(name string, pairs ...float64) record.BenchResult {
		return record.BenchResult{Name: name, Uncontended: &record.UncontendedR{PairsPerSec: NewStat(pairs)}}
	}
	tests := []struct {
		name     string
		impls    []record.BenchResult
		overhead []record.ProtocolOverhead
		want     string // "" when no section is expected
	}{
		{"both measured", []record.BenchResult{
			uncontended("redis-setnx-px", 4000, 4000, 4000, 4000, 4000, 4000),
			uncontended("guest:lab-redis-setnx-px", 1000, 1000, 1000, 1000, 1000, 1000),
		}, nil, "| `guest:lab-redis-setnx-px` | `redis-setnx-px` | uncontended | 1,000 | 4,000 | 0.25× |"},
		{"carried by bench.json", nil, []record.ProtocolOverhead{{Guest: "guest:lab-redis-setnx-px", Native: "redis-setnx-px",
			Workload: Contended, GuestPairs: NewStat([]float64{500}), NativePairs: NewStat([]float64{1000}), Ratio: NewStat([]float64{0.5})}},
			"| `guest:lab-redis-setnx-px` | `redis-setnx-px` | contended | 500 | 1,000 | 0.50× |"},
		{"native lock not in the run", []record.BenchResult{
			uncontended("guest:lab-redis-setnx-px", 1000, 1000, 1000, 1000, 1000, 1000),
		}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			overheadSection(&record.Bench{Impls: tt.impls, Overhead: tt.overhead}, func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
			got := b.String()
			if tt.want == "" {
				if got != "" {
					t.Errorf("a section without both locks:\n%s", got)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("the section lacks the row %q:\n%s", tt.want, got)
			}
		})
	}
}
