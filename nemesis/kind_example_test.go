package nemesis_test

import (
	"fmt"

	"github.com/locklab/locklab/impls"
	_ "github.com/locklab/locklab/impls/all"
	"github.com/locklab/locklab/nemesis"
)

// A fault kind says itself which locks it can reach and what it can strike
// on a topology, before any server starts: a schedule is checked, and
// explore draws its steps, from these answers alone. Here a server's crash
// and restart without its data meets a lock on one Redis, a lock over five
// (Redlock), and the lab's in-process control, which has no server at all.
func ExampleLookup() {
	kind, err := nemesis.Lookup(nemesis.ServerRestartEmpty)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"redis-setnx-px", "redlock", "local-mutex"} {
		spec, err := impls.Lookup(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		topo, err := nemesis.TopologyFor(spec, "single", 4)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := kind.Applies(spec, topo); err != nil {
			fmt.Printf("%s on %s: does not apply: %v\n", kind.Name(), name, err)
			continue
		}
		fmt.Printf("%s on %s: strikes %v\n", kind.Name(), name, kind.Targets(topo))
	}
	// Output:
	// server-restart-empty on redis-setnx-px: strikes [redis-1]
	// server-restart-empty on redlock: strikes [redis-1 redis-2 redis-3 redis-4 redis-5]
	// server-restart-empty on local-mutex: does not apply: local-mutex uses no lock server
}
