package nemesis_test

import (
	"fmt"
	"time"

	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/nemesis"
)

// A schedule is data: which fault kind strikes what, when and for how
// long. This one is the matrix's pause-past-ttl for redis-setnx-px: the
// holder is stopped inside its critical section, then SIGSTOPped past its
// one-second lease. A schedule file holds the same fields as JSON, and
// `bench check -schedule FILE` replays it.
func ExampleSchedule() {
	s := nemesis.Fixed["pause-past-ttl"]("redis-setnx-px", false, time.Second, 5*time.Second)
	fmt.Println(s.Name, s.Impl, "clients:", s.Clients, "runs:", time.Duration(s.Duration))
	for _, st := range s.Faults {
		fmt.Printf("%s %s at failpoint %s for %v\n", st.Kind, st.Target, st.After, time.Duration(st.Duration))
	}
	fmt.Println("valid:", s.Validate() == nil)

	// A step must strike something the lock has.
	s.Faults[0].Target = "client-9"
	fmt.Println(s.Validate() != nil)
	// Output:
	// pause-past-ttl redis-setnx-px clients: 4 runs: 4s
	// client-pause client-0 at failpoint in-critical-section for 3s
	// valid: true
	// true
}
