package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/workload/sale"
)

// A sale's verdict is the checker's over the ways that must sell the stock
// exactly: an oversell is unsafe, stock left inconclusive, and the
// control may oversell without making the sale unsafe.
func TestJudgeSale(t *testing.T) {
	exact := &sale.VersionResult{Stock: 3, Trials: []sale.VersionTrial{{Trial: sale.Trial{Sold: 3}}}}
	tests := []struct {
		name string
		m    engine.SaleMeasured
		want checker.Verdict
	}{
		{"exact", engine.SaleMeasured{Results: []sale.Result{{Way: sale.Conditional, Stock: 3, Trials: []sale.Trial{{Sold: 3}}}}, Version: exact}, checker.Safe},
		{"oversold", engine.SaleMeasured{Results: []sale.Result{{Way: sale.Advisory, Stock: 3, Trials: []sale.Trial{{Sold: 3}, {Sold: 4, Oversold: 1}}}}, Version: exact}, checker.Unsafe},
		{"stock left", engine.SaleMeasured{Results: []sale.Result{{Way: sale.Conditional, Stock: 3, Trials: []sale.Trial{{Sold: 2, Remaining: 1}}}}, Version: exact}, checker.Inconclusive},
		{"the control may oversell", engine.SaleMeasured{Results: []sale.Result{{Way: sale.NoLock, Stock: 3, Trials: []sale.Trial{{Sold: 5, Oversold: 2}}}}, Version: exact}, checker.Safe},
		{"the version oversold", engine.SaleMeasured{Version: &sale.VersionResult{Stock: 3, Trials: []sale.VersionTrial{{Trial: sale.Trial{Sold: 4, Oversold: 1}}}}}, checker.Unsafe},
		{"a way with no trial", engine.SaleMeasured{Results: []sale.Result{{Way: sale.Advisory, Stock: 3}}, Version: exact}, checker.Inconclusive},
		{"no sale by version", engine.SaleMeasured{Results: []sale.Result{{Way: sale.Conditional, Stock: 3, Trials: []sale.Trial{{Sold: 3}}}}}, checker.Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, detail := engine.JudgeSale(tt.m); v != tt.want || (checker.Survived(v) != (detail == "")) {
				t.Fatalf("JudgeSale = %s (%q), want %s, with a detail unless safe", v, detail, tt.want)
			}
		})
	}
}

// TestSaleJob runs a small sale as the engine runs lesson 13's: on the
// PostgreSQL pg-advisory declares, started and stopped by engine.Run, every
// way and the sale by version measured, and the checker's verdict safe
// (the control, which may oversell, left out). About 5 s.
func TestSaleJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	spec, err := impls.Lookup(string(sale.Advisory))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer assertNothingLeft(t)
	var m engine.SaleMeasured
	out, err := engine.Run(ctx, engine.SaleJob(sale.Options{Clients: 4, Stock: 20, Trials: 2}, &m), engine.Options{Impl: spec, Seed: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != checker.Safe {
		t.Errorf("verdict %s (%s), want safe", out.Verdict, out.Detail)
	}
	if len(m.Results) != len(sale.Ways) || m.Version == nil {
		t.Fatalf("measured %d ways and version %v, want %d ways and a sale by version", len(m.Results), m.Version != nil, len(sale.Ways))
	}
	for i, r := range m.Results {
		if r.Way != sale.Ways[i] || len(r.Trials) != 2 || r.Clients != 4 || r.Stock != 20 {
			t.Errorf("result %d: %s, %d trials, %d clients, stock %d; want %s, 2 trials, 4 clients, stock 20", i, r.Way, len(r.Trials), r.Clients, r.Stock, sale.Ways[i])
		}
	}
}
