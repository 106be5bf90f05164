package lessons

import (
	"path/filepath"
	"testing"

	"github.com/locklab/locklab/workload/sale"
)

// TestCommittedSaleOversellsOnlyWithoutALock holds lesson 13's measured
// sale to what the page says of it: the conditional update and the locked
// sale sold exactly the stock in every trial, and the no-lock control was
// caught overselling, so the zero beside the others was measured by a
// figure that can see an oversell.
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
		if err := ExclusiveSale(r); err != nil {
			t.Error(err)
		}
		if r.Way == sale.NoLock && r.Oversold() == 0 {
			t.Errorf("the no-lock control oversold nothing in %d trials: the page's zeros prove nothing", len(r.Trials))
		}
	}
	if rec.Version == nil {
		t.Errorf("sale.json has no sale by version: regenerate lesson 13")
	} else if err := ExclusiveVersionSale(*rec.Version); err != nil {
		t.Error(err)
	}
	for _, w := range sale.Ways {
		if !seen[w] {
			t.Errorf("sale.json has no %s row", w)
		}
	}
}

// ExclusiveSale refuses a sale that oversold, sold short or left stock.
func TestExclusiveSale(t *testing.T) {
	tests := []struct {
		name    string
		r       sale.Result
		wantErr bool
	}{
		{"exact", sale.Result{Way: sale.Conditional, Stock: 3, Trials: []sale.Trial{{Sold: 3}}}, false},
		{"oversold", sale.Result{Way: sale.Advisory, Stock: 3, Trials: []sale.Trial{{Sold: 4, Oversold: 1}}}, true},
		{"stock left", sale.Result{Way: sale.Conditional, Stock: 3, Trials: []sale.Trial{{Sold: 2, Remaining: 1}}}, true},
		{"the control may oversell", sale.Result{Way: sale.NoLock, Stock: 3, Trials: []sale.Trial{{Sold: 5, Oversold: 2}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ExclusiveSale(tt.r); (err != nil) != tt.wantErr {
				t.Fatalf("ExclusiveSale = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
