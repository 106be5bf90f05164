package nemesis

import (
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/faults/failpoint"
	"github.com/locklab/locklab/impls"
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
			Duration: Duration(pastTTL(ttl))})
	},
	// holder-partition: the holder, having read the resource, is cut off
	// every lock server by dropped packets past its lease (the resource
	// stays reachable), then healed; it writes whenever its section ends.
	"holder-partition": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: NetPartitionClient, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(pastTTL(ttl))})
	},
	// holder-crash: the holder is SIGKILLed inside its critical section; a
	// new process takes its slot a TTL later.
	"holder-crash": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientKill, Target: "client-0", After: failpoint.InCriticalSection,
			Duration: Duration(ttl)})
	},
	// crash-after-setnx: the client is SIGKILLed between the steps of its
	// acquire (right after a one-step acquire).
	"crash-after-setnx": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientKill, Target: "client-0",
			After: failpointOr(impl, failpoint.AfterSetNX, failpoint.AfterAcquire), Duration: Duration(ttl)})
	},
	// late-release: the holder is SIGSTOPped just before it releases, past
	// its lease, then resumed to release a lock another client may hold.
	"late-release": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ClientPause, Target: "client-0",
			After: failpointOr(impl, failpoint.BetweenGetAndDel, failpoint.BeforeRelease), Duration: Duration(pastTTL(ttl))})
	},
	// server-restart: the lock's first server is SIGKILLed and restarted
	// without its data while the holder is inside its section; the holder
	// writes after the others had time to take the lock from the empty
	// server.
	"server-restart": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerRestartEmpty, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection})
	},
	// server-pause: the lock's first server is SIGSTOPped past a lease while
	// the holder is inside its section, then resumed; the holder writes
	// after the others had time to take the lock.
	"server-pause": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: ServerPause, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection, Duration: Duration(pastTTL(ttl))})
	},
	// redis-failover: the single Redis master dies while the holder is
	// inside its section; its replica is promoted and takes over its
	// address; the holder writes after the others had time to take the lock
	// from the new master. Unlike the scripted scenario, replication runs
	// freely, so the grant is lost only if it had not reached the replica.
	"redis-failover": func(impl string, fencing bool, ttl time.Duration) Schedule {
		return fixed(impl, fencing, ttl, Step{Kind: FailOver, Target: firstServer(impl), Holder: "client-0",
			After: failpoint.InCriticalSection})
	},
}

// pastTTL is how long a pause or a cut lasts: well past the lease (or
// ZooKeeper session), as in the scripted scenarios.
func pastTTL(ttl time.Duration) time.Duration { return ttl*5/2 + 500*time.Millisecond }

// failpointOr is the lock's own failpoint if it declares one, else the
// generic fallback every client passes.
func failpointOr(impl, own, fallback string) string {
	if spec, err := impls.Lookup(impl); err == nil && slices.Contains(spec.Failpoints, own) {
		return own
	}
	return fallback
}

// firstServer names the first lock server cluster.Start gives impl's
// backend ("" for a lock with none: Validate then says so).
func firstServer(impl string) string {
	spec, err := impls.Lookup(impl)
	if err != nil {
		return ""
	}
	if t := TopologyFor(spec, 1); len(t.Servers) > 0 {
		return t.Servers[0].Name
	}
	return ""
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
