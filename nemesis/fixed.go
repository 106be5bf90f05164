package nemesis

import (
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/faults/failpoint"
)

// Fixed schedules re-express scripted scenarios over the nemesis: the same
// fault kinds, inject and heal steps and history records that explore
// draws at random, landed at a failpoint instead of a random moment.
// (scenarios/ still runs its own scripts; these show the one mechanism.)
var Fixed = map[string]func(impl string, fencing bool, ttl time.Duration) Schedule{}

func init() {
	for name, f := range fixedSchedules {
		Fixed[name] = func(impl string, fencing bool, ttl time.Duration) Schedule {
			s := f(impl, fencing, ttl)
			s.Name = name
			return s
		}
	}
}

var fixedSchedules = map[string]func(impl string, fencing bool, ttl time.Duration) Schedule{
	// pause-past-ttl: the holder is SIGSTOPped after reading the resource,
	// past its lease, then resumed to write.
	"pause-past-ttl": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientPause, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(ttl*5/2 + 500*time.Millisecond)})
	},
	// holder-partition: the holder, having read the resource, is cut off
	// every lock server by dropped packets past its lease (the resource
	// stays reachable), then healed; it writes whenever its section ends.
	"holder-partition": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetPartitionClient, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(ttl*5/2 + 500*time.Millisecond)})
	},
	// holder-crash: the holder is SIGKILLed inside its critical section; a
	// new process takes its slot a TTL later.
	"holder-crash": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientKill, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(ttl)})
	},
}

// FixedNames lists the fixed schedules, sorted.
func FixedNames() []string {
	var out []string
	for n := range Fixed {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func fixed(impl string, fencing bool, ttl time.Duration, st Step) Schedule {
	return Schedule{Impl: impl, Fencing: fencing, TTL: Duration(ttl), Clients: 4, Seed: 1,
		// Two bounds after the heal: room for the checker's minimum
		// progress with sections of up to a third of the TTL.
		Duration: Duration(st.Heal() + 2*checker.Bound(ttl)), Faults: []Step{st}}
}
