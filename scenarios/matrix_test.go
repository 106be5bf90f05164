package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/scenarios"
)

// TestVerdictMatrix runs every implementation under every scenario that
// applies, with and without fencing, against real servers and real worker
// processes, and asserts the verdict the lab expects (scenarios.Expect,
// which gives the reason for each). A cell expected unsafe may take up to
// three runs to produce its counterexample (a fault lands at a moment the
// scheduler chooses); a cell expected safe gets one run and no second
// chance: a single counterexample there fails the test with its timeline.
func TestVerdictMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the verdict matrix takes minutes; run without -short")
	}
	cells, err := scenarios.Cells(impls.All(), scenarios.Names())
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cells {
		t.Run(c.Name(), func(t *testing.T) {
			// Whatever the verdict, no worker or server outlives the cell.
			t.Cleanup(func() {
				if pids := cluster.LivePIDs(); len(pids) != 0 {
					t.Errorf("processes outlived the run: %v", pids)
				}
			})
			exp := c.Expect()
			tries := 1
			if exp.Verdict == scenarios.Unsafe {
				tries = scenarios.UnsafeTries
			}
			var got []scenarios.Verdict
			for try := 0; try < tries; try++ {
				out, err := scenarios.Run(context.Background(), c.Scenario, scenarios.Options{
					Impl: c.Impl, Fencing: c.Fencing, Seed: int64(1000*i + try + 1),
					TTL: time.Second, Clients: 8, Sections: 1000, OutDir: t.TempDir(),
				})
				if err != nil {
					t.Fatal(err)
				}
				if out.Verdict == exp.Verdict {
					checkFigures(t, c, out)
					return
				}
				got = append(got, out.Verdict)
				if out.Verdict == scenarios.Unsafe {
					t.Fatalf("unsafe, expected %s (%s); counterexample %s, seed %d", exp.Verdict, exp.Why, out.HTML, out.Seed)
				}
			}
			t.Fatalf("verdicts %v over %d runs, expected %s: %s", got, tries, exp.Verdict, exp.Why)
		})
	}
}

// checkFigures asserts the figures some verdicts stand on.
func checkFigures(t *testing.T, c scenarios.Cell, out *scenarios.Outcome) {
	t.Helper()
	switch c.Scenario {
	case "redlock-partition":
		if out.Figures["grants-minority-cut"] == 0 {
			t.Errorf("no grants while only a minority was cut: the lock should stay available")
		}
		if out.Figures["grants-majority-cut"] != 0 {
			t.Errorf("%v grants while a majority was cut", out.Figures["grants-majority-cut"])
		}
	case "holder-crash", "crash-after-setnx":
		if out.Verdict == scenarios.Safe && out.Recovery <= 0 {
			t.Errorf("safe after a crash but no recovery measured")
		}
	case "coupon":
		if out.Verdict == scenarios.Safe && out.Figures["oversold"] != 0 {
			t.Errorf("safe, yet %v coupons oversold", out.Figures["oversold"])
		}
	}
}
