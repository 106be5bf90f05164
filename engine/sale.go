package engine

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/workload/sale"
)

// SaleMeasured is what a sale job measured: every way's trials
// (sale.Ways, in order) and the sale by version's.
type SaleMeasured struct {
	Results []sale.Result
	Version *sale.VersionResult
}

// SaleJob is the job that sells a stock on the PostgreSQL of the lock it
// runs for (Options.Impl: pg-advisory, the lock one of the ways takes),
// every way of sale.Ways and then by version, opt's clients, stock and
// trials each; opt.DSN is the run's server. The engine starts and stops
// the server as for every run; the sellers are in-process clients, one
// connection each, as the contention workload's are. What it measured
// lands in *got, and its verdict is the checker's over every trial but
// the control's (JudgeSale).
func SaleJob(opt sale.Options, got *SaleMeasured) Job {
	return Job{Name: "sale", Body: func(ctx context.Context, env *Env) (*Outcome, error) {
		opt.DSN = env.Topo.Endpoints().First(env.Impl.Backend.Kind)
		if opt.DSN == "" {
			return nil, fmt.Errorf("the sale needs a %s server, and the run started none", env.Impl.Backend.Kind)
		}
		var m SaleMeasured
		for _, w := range sale.Ways {
			env.Logf("sale: %s, %d clients, stock %d, %d trials", w, opt.Clients, opt.Stock, opt.Trials)
			r, err := sale.Measure(ctx, opt, w)
			if err != nil {
				return nil, err
			}
			m.Results = append(m.Results, r)
		}
		env.Logf("sale: by version, %d clients, stock %d, %d trials", opt.Clients, opt.Stock, opt.Trials)
		v, err := sale.MeasureVersion(ctx, opt)
		if err != nil {
			return nil, err
		}
		m.Version = &v
		*got = m
		env.Phase(PhaseWorkload)
		out := &Outcome{Clients: opt.Clients, Figures: map[string]float64{}}
		out.Verdict, out.Detail = JudgeSale(m)
		env.Phase(PhaseCheck)
		return out, nil
	}}
}

// JudgeSale has the checker judge a measured sale (checker.JudgeSales)
// by every way that must sell the stock exactly, the sale by version too
// (a measurement without one is judged as a sale of no trial): the worst
// of their verdicts, with a line on the first trial that gave it. The
// control (sale.Way.Control) is left out: it is there to oversell.
func JudgeSale(m SaleMeasured) (checker.Verdict, string) {
	var parts []saleTrials
	for _, r := range m.Results {
		if !r.Way.Control() {
			parts = append(parts, saleTrials{"sale " + string(r.Way), r.Stock, r.Trials})
		}
	}
	version := saleTrials{name: "sale by version"}
	if m.Version != nil {
		version.stock = m.Version.Stock
		for _, t := range m.Version.Trials {
			version.trials = append(version.trials, t.Trial)
		}
	}
	return judgeSales(append(parts, version))
}

// SaleVerdict is the checker's verdict on one way's trials
// (checker.JudgeSale), with a line on the trial that gave it when that is
// not safe.
func SaleVerdict(r sale.Result) (checker.Verdict, string) {
	return judgeSales([]saleTrials{{"sale " + string(r.Way), r.Stock, r.Trials}})
}

// VersionSaleVerdict is SaleVerdict for the sale by version.
func VersionSaleVerdict(r sale.VersionResult) (checker.Verdict, string) {
	return JudgeSale(SaleMeasured{Version: &r})
}

// saleTrials are the trials of one sale the checker judges, and the name
// a line on them gives it.
type saleTrials struct {
	name   string
	stock  int
	trials []sale.Trial
}

// judgeSales has the checker judge sales and says which trial gave a
// verdict that is not safe.
func judgeSales(sales []saleTrials) (checker.Verdict, string) {
	counts := make([][]checker.SaleTrial, len(sales))
	for i, s := range sales {
		for _, t := range s.trials {
			counts[i] = append(counts[i], checker.SaleTrial{Stock: s.stock, Sold: t.Sold, Remaining: t.Remaining})
		}
	}
	v, part, bad := checker.JudgeSales(counts)
	switch {
	case part < 0 && checker.Survived(v):
		return v, ""
	case part < 0:
		return v, "no sale was measured"
	case bad < 0:
		return v, sales[part].name + ": no trial"
	}
	s, t := sales[part], sales[part].trials[bad]
	return v, fmt.Sprintf("%s, trial %d: sold %d of a stock of %d (oversold %d, %d left)", s.name, bad+1, t.Sold, s.stock, t.Oversold, t.Remaining)
}
