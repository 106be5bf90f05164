package lessons

import (
	"path/filepath"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/workload/sale"
)

// TestCommittedSaleOversellsOnlyWithoutALock holds lesson 13's measured
// sale to what the page says of it: the checker finds the conditional
// update, the locked sale and the sale by version safe (each sold exactly
// the stock in every trial), and the no-lock control unsafe (caught
// overselling), so the zero beside the others was measured by a figure
// that can see an oversell.
func TestCommittedSaleOversellsOnlyWithoutALock(t *testing.T) {
	rec, err := loadSale(filepath.Join("..", "docs", "lessons"))
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		t.Fatal("docs/lessons/sale.json is missing: regenerate lesson 13")
	}
	seen := map[sale.Way]bool{}
	for _, r := range rec.Results {
		seen[r.Way] = true
		if len(r.Trials) == 0 {
			t.Errorf("%s: no trials", r.Way)
		}
		v, detail := engine.SaleVerdict(r)
		switch {
		case r.Way.Control() && !checker.SafetyViolated(v):
			t.Errorf("the no-lock control is %s in %d trials, not caught overselling: the page's zeros prove nothing", v, len(r.Trials))
		case !r.Way.Control() && !checker.Survived(v):
			t.Errorf("%s is %s: %s", r.Way, v, detail)
		}
	}
	if rec.Version == nil {
		t.Errorf("sale.json has no sale by version: regenerate lesson 13")
	} else if v, detail := engine.VersionSaleVerdict(*rec.Version); !checker.Survived(v) {
		t.Errorf("the sale by version is %s: %s", v, detail)
	}
	for _, w := range sale.Ways {
		if !seen[w] {
			t.Errorf("sale.json has no %s row", w)
		}
	}
}
