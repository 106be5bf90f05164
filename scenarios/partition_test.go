package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
)

// TestHolderPartition cuts a holder off its lock server by dropping packets
// (no reset, no closed socket) while the resource stays reachable, and
// checks the two findings issue 11 asks for. The expected verdicts follow
// from how each lock frees a lock, not from runs:
//   - pg-advisory: the server frees a session's advisory lock only when it
//     learns the session's connection is dead, and with packets dropped it
//     learns nothing (keepalives start after hours by default). So nobody
//     else is granted the lock while the cut lasts, and the holder's write
//     is safe; the lock comes back once the cut heals. Its claim has no
//     expiry, so the cut never opens a danger window: the checker calls
//     the run n/a, measured (issue 44), and no other client's read falls
//     inside the cut.
//   - zookeeper: the server expires the cut-off holder's session after the
//     session timeout and deletes its node, so another client takes the
//     lock while the holder still goes on: its write breaks mutual
//     exclusion, unless the resource checks fencing tokens.
func TestHolderPartition(t *testing.T) {
	if err := hosts.Available(); err != nil {
		t.Skip(err)
	}
	tests := []struct {
		impl    string
		fencing bool
		want    scenarios.Verdict
	}{
		// make test's matrix leaves this cell out (scenarios.Brief keeps
		// the first n/a cell of a scenario only), so it runs here.
		{"pg-advisory", false, checker.NotApplicable},
	}
	// zookeeper's two cells, unsafe unfenced and safe fenced, are run by
	// make test's matrix, which asserts their verdicts from the table and,
	// in checkFigures, grantedDuringCut's figure; running them here too
	// repeated them (about 13 s). Should the matrix's brief leave them,
	// this fails rather than lose them.
	cells, err := scenarios.Cells(impls.All(), []string{"holder-partition"})
	if err != nil {
		t.Fatal(err)
	}
	var brief []string
	for _, c := range scenarios.Brief(cells) {
		brief = append(brief, c.Name())
	}
	for _, cell := range []string{"zookeeper/holder-partition", "zookeeper/holder-partition/fenced"} {
		if !slices.Contains(brief, cell) {
			t.Errorf("make test's matrix does not run %s: run it here again", cell)
		}
	}
	for _, tt := range tests {
		name := tt.impl
		if tt.fencing {
			name += "/fenced"
		}
		t.Run(name, func(t *testing.T) {
			spec, err := impls.Lookup(tt.impl)
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.RunScenario(context.Background(), "holder-partition", engine.Options{
				Impl: spec, Fencing: tt.fencing, Seed: 11, OutDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != tt.want {
				t.Errorf("verdict %s, want %s (%s) %s", out.Verdict, tt.want, out.Detail, out.HTML)
			}
			during := out.Figures["other-read-during-fault-ms"] >= 0
			if want := grantedDuringCut[tt.impl]; during != want {
				t.Errorf("another client read during the cut: %v (after %v ms), want %v",
					during, out.Figures["other-read-during-fault-ms"], want)
			}
			// The run's hosts, and every process on them, end with the run.
			for _, ns := range hosts.Leftovers() {
				if strings.HasPrefix(ns, fmt.Sprintf("%s%d-", hosts.Prefix, os.Getpid())) {
					t.Errorf("namespace %s outlived the run", ns)
				}
			}
		})
	}
}

// grantedDuringCut says, for each lock whose holder-partition figure the
// tests assert, whether another client reads the resource while the holder
// is cut off (TestHolderPartition gives the reasons).
var grantedDuringCut = map[string]bool{
	"pg-advisory": false,
	"zookeeper":   true,
}
