package sale_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/workload/sale"
)

// TestSaleByVersion sells a real PostgreSQL stock by version
// compare-and-set: it sells exactly the stock, and with a little work
// between the read and the write the sellers collide and retry, which is
// what the retry count is for.
func TestSaleByVersion(t *testing.T) {
	ctx := context.Background()
	n, err := cluster.StartPostgres(ctx, cluster.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	const stock = 50
	res, err := sale.MeasureVersion(ctx, sale.Options{DSN: n.DSN(), Clients: 4, Stock: stock, Trials: 3, Work: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 3 || res.Oversold() != 0 {
		t.Fatalf("trials %+v: want 3, none oversold", res.Trials)
	}
	retried := 0
	for _, tr := range res.Trials {
		if tr.Sold != stock || tr.Remaining != 0 || tr.Rate <= 0 {
			t.Errorf("trial %+v: want %d sold, 0 remaining, a rate", tr, stock)
		}
		if tr.MostRetries > tr.Retries {
			t.Errorf("trial %+v: one sale retried more than the trial did", tr)
		}
		retried += tr.Retries
	}
	if retried == 0 {
		t.Errorf("four sellers with 1ms between read and write never collided: the retry count sees nothing")
	}
}
