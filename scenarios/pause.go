package scenarios

import "github.com/locklab/locklab/checker"

func init() {
	Register(scheduleScenario("pause-past-ttl", checker.RiskAtExpiry,
		"the holder is SIGSTOPped after its last check and before its write, for longer than the TTL, then resumed (a GC pause, holding the lock)",
		nil))

	Register(scheduleScenario("slow-work-past-ttl", checker.RiskAtExpiry,
		"the holder stays alive but works longer than the TTL in one critical section",
		nil))

	Register(scheduleScenario("late-release", checker.RiskAtExpiry,
		"the holder is SIGSTOPped just before releasing, until its lease expired and another client holds; then it releases",
		nil))

	Register(scheduleScenario("client-clock-skew", checker.RiskContention,
		"one client's own clock runs three TTLs ahead of the others'",
		nil))
}
