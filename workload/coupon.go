package workload

import (
	"fmt"
	"math"

	lin "github.com/locklab/locklab/linearizability"
)

// CouponSale is the source documents' coupon sale as the lab's clients run
// it: every section is a sale (Client.Limit is the stock), which reads the
// coupons sold so far on the protected counter and writes one more only
// while fewer than Stock were sold. A lost update shows as coupons sold
// past the stock: a stale writer sets the count back, and the others sell
// again what it gave back.
type CouponSale struct {
	Stock int64
}

// Figures counts the sale in a run's merged history: every write that
// succeeded is a coupon a seller was told it sold. Its speed counts the
// whole sale, from the first section's call to the last sale's write,
// faults included, so a lesson can set it beside a sale measured without
// one. They are figures only: the verdict is the checker's, on the same
// history.
func (s CouponSale) Figures(events []lin.Event) (figures map[string]float64, detail string) {
	sold := int64(0)
	var first, last int64
	for _, e := range events {
		if e.Kind == lin.Call && (first == 0 || e.Time < first) {
			first = e.Time
		}
		if e.Kind == lin.Return && e.Status == lin.OK {
			sold++
			last = max(last, e.Time)
		}
	}
	figures = map[string]float64{"stock": float64(s.Stock), "sold": float64(sold)}
	if sold > 0 && last > first {
		figures["sales-per-s"] = math.Round(float64(sold) / (float64(last-first) / 1e9))
	}
	over := max(sold-s.Stock, 0)
	figures["oversold"] = float64(over)
	return figures, fmt.Sprintf("stock %d, sold %d, oversold %d", s.Stock, sold, over)
}
