package scenarios

import "github.com/locklab/locklab/checker"

func init() {
	// The coupon sale is the same fault as pause-past-ttl and reaches the
	// same verdict for every lock, so it is not a column of the matrix; it
	// stays for the lesson, whose figure (coupons oversold against the
	// stock) says in money what a lost update costs. It is that fault's
	// schedule (observed longer: nemesis's "coupon") with a workload of its
	// own: every section a sale of a stock of 100, counted after the run.
	s := scheduleScenario("coupon", checker.RiskAtExpiry,
		"the source documents' coupon sale: clients sell a stock of 100 under contention while one seller is paused past its TTL; the stock must never oversell",
		nil)
	s.Workload = "coupon-sale"
	s.Demo = true
	Register(s)
}
