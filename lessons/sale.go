package lessons

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/workload/sale"
)

// The sale a page measures: the coupon runs' stock, and enough trials for
// a median of a sale that lasts well under a second.
const (
	saleStock  = 100
	saleTrials = 30
)

// SaleRecord is the measured sale of a page, kept in sale.json beside
// runs.json so a -no-run regeneration still shows it.
type SaleRecord struct {
	Generated string        `json:"generated"`
	Server    string        `json:"server"`
	Results   []sale.Result `json:"results"`
	// Version is the sale by version compare-and-set that
	// 004_84007c392b46b35c.txt rejects for its retries, with every retry
	// counted.
	Version *sale.VersionResult `json:"version,omitempty"`
}

// saleClients is the number of sellers: that of the page's coupon run,
// so the table and the coupon runs beside it sell with as many clients.
func saleClients(p Page, recs map[string]Record) int {
	for _, r := range p.Runs {
		if rec, ok := recs[r.ID]; ok && r.Scenario == "coupon" && rec.Clients > 0 {
			return rec.Clients
		}
	}
	return clients
}

// runSale has the engine sell the stock every way on the server
// pg-advisory declares (one PostgreSQL), started and stopped as for every
// run (engine.SaleJob), and stops the regeneration when the checker finds
// that a way that must not oversell did not sell the stock exactly: the
// conditional update, the locked sale and the sale by version are the
// page's claim that nothing is oversold, so a run that contradicts it
// does not land on the page. The no-lock way is the control the checker
// leaves out; it shows an oversell is seen.
func runSale(ctx context.Context, opt Options, p Page, recs map[string]Record) (SaleRecord, error) {
	spec, err := impls.Lookup(string(sale.Advisory))
	if err != nil {
		return SaleRecord{}, err
	}
	rec := SaleRecord{Generated: time.Now().UTC().Format("2006-01-02 15:04 MST"), Server: "PostgreSQL"}
	var m engine.SaleMeasured
	job := engine.SaleJob(sale.Options{Clients: saleClients(p, recs), Stock: saleStock, Trials: saleTrials}, &m)
	out, err := engine.Run(ctx, job, engine.Options{Impl: spec, Seed: 1, Logf: opt.Logf})
	if err != nil {
		return SaleRecord{}, fmt.Errorf("the sale: %w", err)
	}
	if !checker.Survived(out.Verdict) {
		return SaleRecord{}, fmt.Errorf("the sale is %s (%s): a way that must not oversell did not sell the stock exactly", out.Verdict, out.Detail)
	}
	rec.Results, rec.Version = m.Results, m.Version
	return rec, nil
}

// versionRow is the sale by version's row of the table and its retries.
func versionRow(v *sale.VersionResult) (row, retries string) {
	var rates, perSale []float64
	sold, left, most := 0, v.Stock, 0
	for _, t := range v.Trials {
		rates = append(rates, t.Rate)
		if t.Sold > 0 {
			perSale = append(perSale, float64(t.Retries)/float64(t.Sold))
		}
		sold, left, most = max(sold, t.Sold), min(left, t.Remaining), max(most, t.MostRetries)
	}
	row = fmt.Sprintf("| optimistic version column, read again and retried until its UPDATE matches | `%s` | %s | %d | %d | %d |\n",
		sale.VersionStatement, fmtStat(benchmark.NewStat(rates), ""), sold, v.Oversold(), left)
	retries = fmt.Sprintf("The sale by version retried its UPDATE (the version had moved since its read) %s times per sale (median over trials, with [min–max]); the most retries one sale took in any trial: %d.",
		fmtStat(benchmark.NewStat(perSale), ""), most)
	return row, retries
}

func loadSale(dir string) (*SaleRecord, error) { return loadRecord[SaleRecord](dir, "sale.json") }

func saveSale(dir string, r SaleRecord) error { return saveRecord(dir, "sale.json", r) }

// saleBlock is the measured sale beside the page's coupon runs, every
// figure with the settings it was measured with.
func saleBlock(p Page, s *SaleRecord, recs map[string]Record) string {
	if s == nil || len(s.Results) == 0 {
		return "Not run yet: run `make lessons`."
	}
	var b strings.Builder
	first := s.Results[0]
	fmt.Fprintf(&b, "Measured %s by `make lessons` on one %s the lab started: stock %d, %d clients (one connection each), %d trials per row, nothing done between a read and its write. Sales per second: median over trials, with [min–max]; sold, oversold and remaining: the worst trial.\n\n",
		s.Generated, s.Server, first.Stock, first.Clients, len(first.Trials))
	b.WriteString("| each sale | statement(s) | sales/s | sold | oversold | remaining |\n|---|---|---|---|---|---|\n")
	for _, r := range s.Results {
		sold, left := 0, r.Stock
		for _, t := range r.Trials {
			sold = max(sold, t.Sold)
			left = min(left, t.Remaining)
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %d | %d | %d |\n", saleName(r.Way), r.Way.Statement(),
			fmtStat(benchmark.NewStat(r.Rates()), ""), sold, r.Oversold(), left)
	}
	if s.Version != nil {
		row, retries := versionRow(s.Version)
		b.WriteString(row)
		b.WriteString("\n[" + retries[:strings.Index(retries, " retried")] + "](glossary.md#coupon-figures)" + retries[strings.Index(retries, " retried"):] + "\n")
	}
	var coupon []string
	for _, r := range p.Runs {
		rec, ok := recs[r.ID]
		if !ok || r.Scenario != "coupon" {
			continue
		}
		who := fmt.Sprintf("%d clients", rec.Clients)
		if rec.Processes {
			who = fmt.Sprintf("%d client processes", rec.Clients)
		}
		fence := "no fence"
		if rec.Fencing {
			fence = "fenced"
		}
		rate := "–"
		if v, ok := rec.Figures["sales-per-s"]; ok {
			rate = num(v)
		}
		coupon = append(coupon, fmt.Sprintf("| `%s` on Redis, %s (run %s) | %s, stock %g, TTL %s, one seller paused past its TTL | %s | %g | %g |",
			rec.Impl, fence, rec.ID, who, rec.Figures["stock"], rec.TTL, rate, rec.Figures["sold"], rec.Figures["oversold"]))
	}
	if len(coupon) > 0 {
		b.WriteString("\nThe coupon runs above, for comparison (their stock is a counter on Redis, and their sales per second count the whole run: the work each seller does while it holds the lock, and the seller's pause):\n\n")
		b.WriteString("| coupon sale | settings | sales/s | sold | oversold |\n|---|---|---|---|---|\n")
		b.WriteString(strings.Join(coupon, "\n") + "\n")
	}
	return b.String()
}

func saleName(w sale.Way) string {
	switch w {
	case sale.Conditional:
		return "one conditional UPDATE, no lock"
	case sale.Advisory:
		return "`pg-advisory` lock, then read and write"
	case sale.NoLock:
		return "read and write, no lock"
	}
	return string(w)
}
