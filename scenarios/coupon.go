package scenarios

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// couponStock is how many coupons the sale has.
const couponStock = 100

func init() {
	// The coupon sale is the same fault as pause-past-ttl and reaches the
	// same verdict for every lock, so it is not a column of the matrix; it
	// stays for the lesson, whose figure (coupons oversold against the
	// stock) says in money what a lost update costs.
	s := workerScenario("coupon",
		"the source documents' coupon sale: clients sell a stock of 100 under contention while one seller is paused past its TTL; the stock must never oversell",
		nil, nil, engine.Script{
			Edit:    func(env *engine.Env, id int, ws *engine.WorkerSpec) { ws.Limit = couponStock },
			Trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
			Inject: func(ctx context.Context, r *engine.ScriptRun) error {
				return r.Victim.Pause(ctx, pastTTL(r.Env), " (a GC pause mid-sale)", r.Victim.Continue)
			},
			Observe: func(*engine.Env) time.Duration { return 1500 * time.Millisecond },
			Figures: func(r *engine.ScriptRun, out *engine.Outcome) error {
				// The sale's speed counts the whole sale, from the first
				// section's call to the last sale's write, pause included,
				// so a lesson can set it beside a sale measured without one.
				sold := 0
				var first, last int64
				for _, e := range r.Events {
					if e.Kind == lin.Call && (first == 0 || e.Time < first) {
						first = e.Time
					}
					if e.Kind == lin.Return && e.Status == lin.OK {
						sold++
						last = max(last, e.Time)
					}
				}
				if sold > 0 && last > first {
					out.Figures["sales-per-s"] = math.Round(float64(sold) / (float64(last-first) / 1e9))
				}
				out.Figures["stock"] = couponStock
				out.Figures["sold"] = float64(sold)
				over := sold - couponStock
				if over < 0 {
					over = 0
				}
				out.Figures["oversold"] = float64(over)
				out.Detail = fmt.Sprintf("stock %d, sold %d, oversold %d", couponStock, sold, over)
				return nil
			},
		})
	s.Demo = true
	Register(s)
}
