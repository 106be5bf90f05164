package scenarios

import (
	"errors"
	"fmt"
	"github.com/locklab/locklab/checker"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/topology"
)

// The quorum topologies' cells: a few single-server scenarios that mean
// the same on an ensemble (no fault, a crashed or paused holder), and the
// faults only an ensemble has (its leader cut off; the server the holder's
// session lives on cut off while the rest keep a quorum).

// quorumTopologies are the named topologies whose lock servers form one
// system with roles.
var quorumTopologies = []string{topology.ZKEnsembleName, topology.EtcdClusterName}

func init() {
	Register(onTopologies(scheduleScenario("leader-isolated", checker.RiskAtStrike,
		"on an ensemble, whichever server leads while the holder is in its section is cut off every other host past a lease; "+
			"the rest keep a quorum and elect a new leader",
		nil), quorumTopologies...))
	Register(onTopologies(scheduleScenario("holder-server-cut", checker.RiskAtExpiry,
		"on an ensemble, the holder is cut off the one server its session is connected to, past a lease; "+
			"that server stays in the quorum, and the holder's client may reconnect to another member",
		oneServerClient), quorumTopologies...))
	for _, name := range []string{"contention", "holder-crash", "pause-past-ttl"} {
		extend(name, quorumTopologies...)
	}
}

// oneServerClient applies to locks whose client talks to one member of an
// ensemble at a time (a ZooKeeper session lives on one server): the
// kind's own answer (cluster.ServerKind.OneServerSession). etcd's client
// holds a gRPC connection to every member at once, so no one server is the
// holder's and there is nothing for the cut to aim at (the engine refuses
// to guess: "connected to 3 lock servers, not one").
func oneServerClient(spec impls.Spec, _ bool) error {
	if spec.Backend.InProcess || spec.Backend.Kind == "" {
		return errors.New("it cuts the holder off the one server its session lives on, and an in-process lock has none")
	}
	k, err := cluster.KindOf(spec.Backend.Kind)
	if err != nil {
		return fmt.Errorf("it cuts the holder off the one server its session lives on: %w", err)
	}
	return k.OneServerSession()
}

// onTopologies returns s set to run on topos only.
func onTopologies(s Scenario, topos ...string) Scenario {
	s.Topologies = topos
	return s
}

// extend makes a registered scenario run on topos too, besides where it ran.
func extend(name string, topos ...string) {
	regMu.Lock()
	defer regMu.Unlock()
	s, ok := reg[name]
	if !ok {
		panic(fmt.Sprintf("scenarios: no scenario %s to extend", name))
	}
	if len(s.Topologies) == 0 {
		s.Topologies = []string{topology.SingleName}
	}
	s.Topologies = append(s.Topologies, topos...)
	reg[name] = s
}
