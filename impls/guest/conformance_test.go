package guest_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/impls/conformance"
	"github.com/locklab/locklab/impls/guest"
)

func TestMain(m *testing.M) {
	guest.Prestart(true)
	code := m.Run()
	guest.Prestart(false)
	cluster.StopAll()
	os.Exit(code)
}

// Every guest in the repository's guests/ folder: the conformance and
// adversarial suites prove what it declares, against real servers, through
// the protocol. The defects are the guest libraries' own, recorded here as
// the peers' are in impls/peers.
//
// The TTL is 2 s, not the 1 s of the lab's own locks: each of a guest's
// operations crosses two pipes and another runtime's scheduler, and on the
// shared two-core machine (load 20 and more, the lab's processes at nice 19)
// a grant, a release and a new client's start took more than a 1 s lease in
// the suite's TTL-bounded sequences.
var guestSuites = map[string]conformance.Options{
	// AbandonedWaitTakesItsTurn: redis-py's blocking acquire cannot be
	// interrupted; the guest waits in slices of 50 ms and sees a cancel
	// only between them, so a wait abandoned just before a release can
	// still take the lock in its last slice, and the lab then gives that
	// late grant back (found by the clean-clone make test: the next
	// client's TryAcquire met it).
	"redis-py":       {TTL: guestTTL, AbandonedWaitTakesItsTurn: true},
	"node-redlock":   {TTL: guestTTL},
	"node-redlock-5": {TTL: guestTTL},
	"node-redisson":  {TTL: guestTTL},
	// ZooKeeper's tick is 100ms here, so a 2s session is 20 ticks, the
	// most the server grants.
	"curator": {TTL: guestTTL, KnownDefects: map[string]string{
		conformance.ForeignContender("Kazoo"): "Curator orders the children by what follows \"lock-\" " +
			"(StandardLockInternalsDriver.fixForSorting); kazoo's \"__lock__<seq>\" has no \"lock-\", so its " +
			"whole name sorts after every sequence number and a kazoo holder is ignored",
		conformance.DefectStaleReleaseFrees: "Curator's release ignores a lock node already gone " +
			"(LockInternals.deleteOurPath catches NoNodeException): a holder whose node was deleted behind " +
			"its back is told its release succeeded (the new holder's node is untouched)",
	}},
	// The native lock's recorded limitation (impls/redislock), the same lock.
	wrapsNative: {TTL: guestTTL, KnownDefects: conformance.CounterResetLimitation},
}

// The lab's own redis-setnx-px behind the protocol (guests/lab-redis-setnx-px)
// is there to measure what the protocol costs; the lock is the native one,
// which impls/redislock's conformance proves in full (with the same recorded
// limitation). So make test, which names no test, runs only the checks that
// cross the protocol in every way (a grant and a refusal, a cancelled wait,
// a double release, the fencing tokens, odd key names, a stalled and a gone
// server: a few seconds); naming the guest (-run 'TestConformance/lab-redis-setnx-px')
// or LOCKLAB_MATRIX_ALL=1 runs the whole suite.
const wrapsNative = "lab-redis-setnx-px"

var wrapsNativeBrief = []string{
	"TryAcquireReturnsHeldAtOnce", "ReleaseTwiceIsNotHeld", "BlockedAcquireEndsWithContextAndLeavesNothing",
	"CapabilityFencing", "AdversarialKeyNames", "StalledServerGivesUnknownOutcome", "ServerGoneGivesBackendFailure",
}

// guestBriefLeaves are the checks make test leaves out of every other
// guest's run: the adversarial suites (state the library never creates
// itself, and races between its operations), which take about a third of
// a guest's suite and judge the library, not the protocol, and which the
// guest's full run makes. A guest's capabilities are still proven in make
// test, each of them, through the protocol.
var guestBriefLeaves = []string{"AdversarialRaces", "AdversarialRedis", "AdversarialZooKeeper"}

// suiteOf returns a guest's options for this run: make test, which names
// no guest, runs a brief suite (the protocol checks for the guest that
// wraps a native lock, every check but the adversarial suites for the
// others); naming the guest in -run, LOCKLAB_MATRIX_ALL=1 or make
// conformance runs the whole suite.
func suiteOf(name string, opts conformance.Options) conformance.Options {
	if os.Getenv("LOCKLAB_MATRIX_ALL") != "" {
		return opts
	}
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), name) {
		return opts
	}
	if name == wrapsNative {
		opts.Only = wrapsNativeBrief
	} else {
		opts.Leave = guestBriefLeaves
	}
	return opts
}

const guestTTL = 2 * time.Second

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
				// A new guest is held to the whole suite until its line
				// above records what its library does not do.
				opts = conformance.Options{TTL: guestTTL}
			}
			spec, err := impls.Lookup(m.ImplName())
			if err != nil {
				t.Fatal(err)
			}
			conformance.Run(t, spec, conformance.Topology(t, spec), suiteOf(m.Name, opts))
		})
	}
}

// The page for lock authors lists every guest the repository ships.
func TestEveryGuestHasARow(t *testing.T) {
	ms, err := guest.LoadAll(guest.Root())
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(guest.Root(), "docs", "guests", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if !strings.Contains(string(page), "| `"+m.ImplName()+"` |") {
			t.Errorf("docs/guests/README.md has no row for %s", m.ImplName())
		}
	}
}
