package scenarios

import "github.com/locklab/locklab/workload"

// Client is workload.Client under the name the scenarios, the benchmarks
// and the lessons have always used.
type Client = workload.Client
