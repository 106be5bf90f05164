package scenarios_test

import (
	"fmt"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/scenarios"
)

// A scenario is a value: a name, what it shows, and where it applies. The
// matrix makes a cell of every lock and topology it applies to, and names
// the reason for every one it does not; nothing starts until a cell runs.
func ExampleLookup() {
	s, err := scenarios.Lookup("pause-past-ttl")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name+":", s.Summary)
	for _, c := range []struct {
		impl, topology string
		fencing        bool
	}{
		{"redis-setnx-px", "single", true},
		{"local-mutex", "single", false},
		{"zookeeper", "zk-ensemble", false},
	} {
		spec, err := impls.Lookup(c.impl)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := s.AppliesOn(spec, c.topology, c.fencing); err != nil {
			fmt.Printf("%s on %s: not a cell: %v\n", c.impl, c.topology, err)
			continue
		}
		fmt.Printf("%s on %s (fencing %v): a cell\n", c.impl, c.topology, c.fencing)
	}
	// Output:
	// pause-past-ttl: the holder is SIGSTOPped after its last check and before its write, for longer than the TTL, then resumed (a GC pause, holding the lock)
	// redis-setnx-px on single (fencing true): a cell
	// local-mutex on single: not a cell: clients share one process, so no client fault applies and no worker can run it
	// zookeeper on zk-ensemble (fencing false): a cell
}
