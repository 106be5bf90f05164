package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// couponStock is how many coupons the sale has.
const couponStock = 100

// pastTTL is how long a scripted pause lasts: well past the lease (or
// ZooKeeper session) so that it surely expired and someone else holds.
func pastTTL(env *Env) time.Duration { return env.TTL*5/2 + 500*time.Millisecond }

// couponSale is the source documents' coupon sale: the workers sell a
// stock of couponStock while the victim is paused in its section past its
// TTL. Its figures (coupons oversold against the stock) say in money what
// a lost update costs.
var couponSale = Script{
	Edit:    func(env *Env, id int, ws *WorkerSpec) { ws.Limit = couponStock },
	Trigger: func(impls.Spec) string { return failpoint.InCriticalSection },
	Inject: func(ctx context.Context, r *ScriptRun) error {
		return r.Victim.Pause(ctx, pastTTL(r.Env), " (a GC pause mid-sale)", r.Victim.Continue)
	},
	Observe: func(*Env) time.Duration { return 1500 * time.Millisecond },
	Figures: couponFigures,
}

// couponFigures counts the sale. Its speed counts the whole sale, from
// the first section's call to the last sale's write, pause included, so a
// lesson can set it beside a sale measured without one.
func couponFigures(r *ScriptRun, out *Outcome) error {
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
}
