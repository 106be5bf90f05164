package nemesis

import (
	"context"

	"github.com/locklab/locklab/impls"
)

// ClientSlowSection keeps a live holder inside its critical section, past
// its lease: no signal, its renewals and heartbeats run on, as in a slow
// disk write or a long computation while holding the lock. It was the
// scripted slow-work-past-ttl (a first section made long by a workload
// option); as a kind it is the failpoint stop every fixed schedule already
// uses, with nothing else done to the client.
const ClientSlowSection = "client-slow-section"

func init() { register(clientSlow{}) }

// atFailpoint marks a kind that means something only where a client stops
// at a failpoint: a random schedule, which strikes at random moments,
// cannot use it.
type atFailpoint interface{ onlyAtFailpoint() }

type clientSlow struct{}

func (clientSlow) Name() string                                 { return ClientSlowSection }
func (clientSlow) Applies(spec impls.Spec, topo Topology) error { return clientApplies(spec, topo) }
func (clientSlow) Targets(topo Topology) []string               { return clientTargets(topo) }
func (clientSlow) onlyAtFailpoint()                             {}

// Inject and Heal do nothing to the client: the runner holds it at its
// failpoint, inside its section, from the strike until just before the heal.
func (clientSlow) Inject(context.Context, System, string) (string, error) {
	return "stays in its section, alive", nil
}

func (clientSlow) Heal(context.Context, System, string) (string, error) {
	return "its section ends", nil
}
