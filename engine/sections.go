package engine

import (
	"maps"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/workload"
)

// sections is a workload that runs on a schedule's worker processes
// (scenarios.Scenario.Workload beside a Schedule): what every worker's
// critical section does, a replacement's too, and the figures read off
// the merged history once the run stopped. The schedule's faults, the
// workers and the checker are the ones every schedule's run has; a
// schedule run with none does the plain read-work-write.
type sections interface {
	// edit sets a worker's section before the worker starts.
	edit(ws *WorkerSpec)
	// figures adds the workload's figures and detail to out (never the
	// verdict: the checker decides it).
	figures(events []lin.Event, out *Outcome)
}

// workerWorkloads are the workloads scenarios name beside a schedule.
var workerWorkloads = map[string]sections{
	// coupon-sale: the source documents' coupon sale, a stock of 100.
	"coupon-sale": couponSale{workload.CouponSale{Stock: 100}},
}

// couponSale makes every section a sale of the stock (runner's
// WorkerSpec.Limit, workload.Client.Limit) and counts the sale after.
type couponSale struct{ workload.CouponSale }

func (s couponSale) edit(ws *WorkerSpec) { ws.Limit = s.Stock }

func (s couponSale) figures(events []lin.Event, out *Outcome) {
	figures, detail := s.Figures(events)
	maps.Copy(out.Figures, figures)
	if out.Detail != "" {
		detail = out.Detail + "; " + detail
	}
	out.Detail = detail
}
