package guest_test

import (
	"os"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/impls/guest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.StopAll()
	os.Exit(code)
}

// Every guest in the repository's guests/ folder: the conformance and
// adversarial suites prove what it declares, against real servers, through
// the protocol. The defects are the guest libraries' own, recorded here as
// the peers' are in impls/peers.
var guestSuites = map[string]conformance.Options{
	"redis-py": {},
	// ZooKeeper's tick is 100ms here, so a 1s session is 10 ticks, as for
	// the lab's zookeeper lock.
	"curator": {TTL: time.Second, KnownDefects: map[string]string{
		conformance.ForeignContender("Kazoo"): "Curator orders the children by what follows \"lock-\" " +
			"(StandardLockInternalsDriver.fixForSorting); kazoo's \"__lock__<seq>\" has no \"lock-\", so its " +
			"whole name sorts after every sequence number and a kazoo holder is ignored",
		conformance.DefectStaleReleaseFrees: "Curator's release ignores a lock node already gone " +
			"(LockInternals.deleteOurPath catches NoNodeException): a holder whose node was deleted behind " +
			"its back is told its release succeeded (the new holder's node is untouched)",
	}},
}

func TestConformance(t *testing.T) {
	if guest.LoadErr != nil {
		t.Fatalf("guest manifests: %v", guest.LoadErr)
	}
	ms, err := guest.LoadAll(guest.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		t.Run(m.Name, func(t *testing.T) {
			opts, ok := guestSuites[m.Name]
			if !ok {
				t.Skipf("guest %s has no conformance options in this test yet", m.Name)
			}
			spec, err := impls.Lookup(m.ImplName())
			if err != nil {
				t.Fatal(err)
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), opts)
		})
	}
}
