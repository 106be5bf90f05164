package scenarios

import "github.com/locklab/locklab/checker"

func init() {
	Register(Scenario{
		Risk:     checker.RiskContention,
		Name:     "contention",
		Summary:  "clients race for one key doing read-work-write critical sections; no faults",
		Workload: "contention",
	})
}
