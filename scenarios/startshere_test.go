package scenarios

import (
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// TopologyStartsHere says why the named topology's servers cannot start
// in this process's server mode, for any lock kind it carries (nil when
// they can): a test that pins cells on it skips with this reason, as
// Cells leaves them out for it (container mode starts no Sentinel).
func TopologyStartsHere(t *testing.T, name string) error {
	t.Helper()
	named, err := topology.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range named.Kinds {
		decl, err := named.Declare(topology.Need{Kind: k})
		if err != nil {
			// A topology for locks that wait for replicas only.
			if decl, err = named.Declare(topology.Need{Kind: k, Replicas: true}); err != nil {
				continue
			}
		}
		if err := cluster.StartsHere(decl); err != nil {
			return err
		}
	}
	return nil
}

// SkipUnlessCellsRunHere skips t, saying why, when the named topologies
// cannot start here, or when needsHosts and the lab's hosts cannot be
// made here (container mode, or no root): the cells a test pins there are
// then not in this mode's matrix.
func SkipUnlessCellsRunHere(t *testing.T, needsHosts bool, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := TopologyStartsHere(t, name); err != nil {
			t.Skipf("%s cannot start here: %v", name, err)
		}
	}
	if needsHosts {
		if err := hosts.Available(); err != nil {
			t.Skipf("its cells' faults need the lab's hosts: %v", err)
		}
	}
}
