package scenarios

func init() {
	Register(Scenario{
		Name:     "contention",
		Summary:  "clients race for one key doing read-work-write critical sections; no faults",
		Workload: "contention",
	})
}
