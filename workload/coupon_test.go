package workload_test

import (
	"maps"
	"testing"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/workload"
)

// A sale is counted by its writes that succeeded: a sold-out section
// (aborted), a refused stale write and one whose outcome is unknown sell
// nothing; sales past the stock are oversold; the speed runs from the
// first section's call to the last sale's write.
func TestCouponSaleFigures(t *testing.T) {
	// A section called at ms milliseconds into the run, returning 100 ms
	// later (a history's times are monotonic nanoseconds, never zero).
	sale := func(ms int64, st lin.Status) []lin.Event {
		at := int64(1e9) + ms*1e6
		return []lin.Event{{Kind: lin.Call, Time: at}, {Kind: lin.Return, Time: at + 1e8, Status: st}}
	}
	tests := []struct {
		name   string
		stock  int64
		events [][]lin.Event
		want   map[string]float64
		detail string
	}{
		{"nothing sold", 2, nil,
			map[string]float64{"stock": 2, "sold": 0, "oversold": 0}, "stock 2, sold 0, oversold 0"},
		{"sold out, then refused and aborted", 2,
			[][]lin.Event{sale(0, lin.OK), sale(400, lin.OK), sale(900, lin.Aborted), sale(900, lin.Refused), sale(900, lin.Unknown)},
			map[string]float64{"stock": 2, "sold": 2, "oversold": 0, "sales-per-s": 4}, "stock 2, sold 2, oversold 0"},
		{"a stale write sold the stock again", 2,
			[][]lin.Event{sale(0, lin.OK), sale(100, lin.OK), sale(200, lin.OK), sale(400, lin.OK), sale(900, lin.OK)},
			map[string]float64{"stock": 2, "sold": 5, "oversold": 3, "sales-per-s": 5}, "stock 2, sold 5, oversold 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []lin.Event
			for _, s := range tt.events {
				events = append(events, s...)
			}
			got, detail := workload.CouponSale{Stock: tt.stock}.Figures(events)
			if !maps.Equal(got, tt.want) || detail != tt.detail {
				t.Fatalf("Figures = %v, %q; want %v, %q", got, detail, tt.want, tt.detail)
			}
		})
	}
}
