package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// TestVerdictMatrix runs every implementation under every scenario that
// applies, with and without fencing, against real servers and real worker
// processes, and asserts the verdict of the reviewed expectation table
// (expectations.md, which gives the reason for each).
//
// Effort is equal: every cell gets LOCKLAB_MATRIX_RUNS runs (default 1 here,
// to stay within CI's time; `bench matrix` runs 3), and a cell whose verdict
// differs from the table after them gets two more, whatever the table says.
// The verdict is the worst over all runs, so a safe cell that shows one
// counterexample fails, and a run with too little progress (inconclusive)
// never passes as safe.
//
// Cells run LOCKLAB_MATRIX_PARALLEL at once (default 2; `bench matrix
// -parallel` defaults to 3, measured on 3 runs a cell, and a cell here
// runs once): a cell spends almost all its time waiting out leases and
// faults. A scenario marked Alone runs with no other cell beside it.
// With more than one at once, no process outliving the cells is checked
// once they all ended, not after each (another cell's are alive then).
func TestVerdictMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the verdict matrix takes minutes; run without -short")
	}
	runs := 1
	if s := os.Getenv("LOCKLAB_MATRIX_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("LOCKLAB_MATRIX_RUNS=%q: want a positive integer", s)
		}
		runs = n
	}
	parallel := 2
	if s := os.Getenv("LOCKLAB_MATRIX_PARALLEL"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("LOCKLAB_MATRIX_PARALLEL=%q: want a positive integer", s)
		}
		parallel = n
	}
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("LOCKLAB_MATRIX_ALL") == "" {
		// make test: every single-topology cell, and each other topology
		// briefly (scenarios.Brief); make matrix runs them all.
		cells = scenarios.Brief(cells)
	}
	noneOutlive := func(t *testing.T, what string) {
		if pids := cluster.LivePIDs(); len(pids) != 0 {
			t.Errorf("processes outlived the %s: %v", what, pids)
		}
		// A cell's hosts, and every process on them, end with it.
		for _, ns := range hosts.Leftovers() {
			if strings.HasPrefix(ns, fmt.Sprintf("%s%d-", hosts.Prefix, os.Getpid())) {
				t.Errorf("namespace %s outlived the %s", ns, what)
			}
		}
	}
	// Whatever the verdicts, no worker or server outlives the cells: a
	// parent's cleanup runs once its parallel subtests have all ended.
	t.Cleanup(func() { noneOutlive(t, "cells") })
	slots := make(chan struct{}, parallel)
	var gate sync.RWMutex // an Alone cell holds it by itself, the others share it
	for _, i := range scenarios.AloneLast(cells) {
		c := cells[i]
		t.Run(c.Name(), func(t *testing.T) {
			if parallel > 1 {
				t.Parallel()
				slots <- struct{}{}
				defer func() { <-slots }()
				if scenarios.RunsAlone(c) {
					gate.Lock()
					defer gate.Unlock()
				} else {
					gate.RLock()
					defer gate.RUnlock()
				}
			} else {
				// Whatever the verdict, no worker or server outlives the cell.
				t.Cleanup(func() { noneOutlive(t, "cell") })
			}
			verdictCell(t, i, c, runs)
		})
	}
}

// verdictCell runs cell c (the i-th of the matrix) runs times, two more
// when it disagrees with the table, and asserts the table's verdict.
func verdictCell(t *testing.T, i int, c scenarios.Cell, runs int) {
	exp, err := c.Expect()
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.Options{Seed: int64(1000*i + 1), TTL: time.Second, Clients: 8, Sections: 1000, OutDir: t.TempDir()}
	outs, err := engine.RunCell(context.Background(), c, runs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if checker.CellVerdict(verdicts(outs)) != exp.Verdict {
		opts.Seed += int64(runs)
		more, err := engine.RunCell(context.Background(), c, 2, opts)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, more...)
	}
	got := checker.CellVerdict(verdicts(outs))
	if got != exp.Verdict {
		var detail []string
		for _, o := range outs {
			d := fmt.Sprintf("seed %d: %s", o.Seed, o.Verdict)
			if o.HTML != "" {
				d += " (counterexample " + o.HTML + ")"
			}
			if o.Detail != "" {
				d += ": " + o.Detail
			}
			detail = append(detail, d)
		}
		t.Fatalf("%s over %d runs, expected %s (%s)\n%s", got, len(outs), exp.Verdict, exp.Why, strings.Join(detail, "\n"))
	}
	for _, o := range outs {
		checkFigures(t, c, o)
	}
}

// checkFigures asserts the figures some verdicts stand on.
func checkFigures(t *testing.T, c scenarios.Cell, out *engine.Outcome) {
	t.Helper()
	switch c.Scenario {
	case "holder-crash", "crash-after-setnx":
		if out.Verdict == checker.Safe && out.Recovery <= 0 {
			t.Errorf("safe after a crash but no recovery measured")
		}
	case "holder-partition":
		// Whether another client reads the resource while the holder is
		// cut off follows from how the lock frees a lock
		// (TestHolderPartition says why, of the single topology): this
		// check of the cells the matrix runs is that test's for the same
		// cells.
		if want, ok := grantedDuringCut[c.Impl.Name]; ok && topology.Or(c.Topology) == topology.SingleName {
			ms := out.Figures["other-read-during-fault-ms"]
			if during := ms >= 0; during != want {
				t.Errorf("another client read during the cut: %v (after %v ms), want %v", during, ms, want)
			}
		}
	case "holder-session-ended":
		// A lock that tells its holder of a loss has the figure of when
		// it did (-1: not while the holder held); one that cannot, none.
		v, ok := out.Figures["lost-notice-ms"]
		if ok != c.Impl.Caps.LostNotify || v < -1 {
			t.Errorf("lost-notice-ms %v (present %v), want it present exactly when the lock declares lost-notify (%v)", v, ok, c.Impl.Caps.LostNotify)
		}
	}
}

// verdicts lists the runs' verdicts, for checker.CellVerdict.
func verdicts(outs []*engine.Outcome) []checker.Verdict {
	var vs []checker.Verdict
	for _, o := range outs {
		vs = append(vs, o.Verdict)
	}
	return vs
}
