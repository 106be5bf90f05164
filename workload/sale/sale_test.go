package sale_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/workload/sale"
)

// TestSale sells a real PostgreSQL stock each way: the conditional update
// and the advisory lock sell exactly the stock and leave none, while the
// same read-check-write with no lock is caught selling more than the
// stock, so the oversold figure is known to see an oversell when one
// happens.
func TestSale(t *testing.T) {
	ctx := context.Background()
	n, err := cluster.StartPostgres(ctx, cluster.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	const stock = 50
	tests := []struct {
		way  sale.Way
		work time.Duration // widens the read-to-write window
		// wantOversold: some trial sold more than the stock.
		wantOversold bool
	}{
		{way: sale.Conditional},
		{way: sale.Advisory, work: time.Millisecond},
		{way: sale.NoLock, work: time.Millisecond, wantOversold: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.way), func(t *testing.T) {
			res, err := sale.Measure(ctx, sale.Options{DSN: n.DSN(), Clients: 4, Stock: stock, Trials: 3, Work: tt.work}, tt.way)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trials) != 3 {
				t.Fatalf("%d trials, want 3", len(res.Trials))
			}
			if got := res.Oversold() > 0; got != tt.wantOversold {
				t.Fatalf("oversold %d (trials %+v), want oversold: %v", res.Oversold(), res.Trials, tt.wantOversold)
			}
			for _, tr := range res.Trials {
				if tr.Rate <= 0 {
					t.Errorf("trial %+v: no sales per second", tr)
				}
				if tt.wantOversold {
					continue
				}
				// An exclusive sale sells the whole stock, and the row agrees.
				if tr.Sold != stock || tr.Remaining != 0 {
					t.Errorf("trial %+v: want %d sold and 0 remaining", tr, stock)
				}
			}
		})
	}
}
