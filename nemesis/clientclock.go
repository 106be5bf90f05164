package nemesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/impls"
	lin "github.com/locklab/locklab/linearizability"
)

// ClientClockSkew is a client's own wall clock running three TTLs ahead
// of the others' until the heal. The skew reaches a lock only through the
// client's reads of its clock (impls.Config.Clock): a lock that never
// reads it is not exercised by the fault, and the worker says how often it
// read it (Reacher).
const ClientClockSkew = "client-clock-skew"

// ReachClockReads names what a client clock skew needs a lock to do to
// reach it: read the client's clock (the worker's Reached event).
const ReachClockReads = lin.ReachClockReads

func init() { register(clientClockSkew{}) }

// ClockSkewer is a client process whose own clock a fault can move.
type ClockSkewer interface {
	SkewClock(d time.Duration) error
}

// Reacher is a Kind that reaches a lock only through something the lock
// may never do; Reach names it, as the worker's Reached event does, so
// the checker can tell a lock the fault never reached from one it left
// safe.
type Reacher interface {
	Reach() string
}

type clientClockSkew struct{}

func (clientClockSkew) Name() string  { return ClientClockSkew }
func (clientClockSkew) Reach() string { return ReachClockReads }
func (clientClockSkew) Applies(spec impls.Spec, topo Topology) error {
	return clientApplies(spec, topo)
}
func (clientClockSkew) Targets(topo Topology) []string { return clientTargets(topo) }

func (clientClockSkew) Inject(ctx context.Context, sys System, target string) (string, error) {
	d := 3 * sys.TTL()
	if err := skewClient(sys, target, d); err != nil {
		return "", err
	}
	return fmt.Sprintf("its clock runs %v ahead", d), nil
}

func (clientClockSkew) Heal(ctx context.Context, sys System, target string) (string, error) {
	return "its clock back to true time", skewClient(sys, target, 0)
}

func skewClient(sys System, target string, d time.Duration) error {
	slot, err := ClientSlot(target)
	if err != nil {
		return err
	}
	p, err := sys.Client(slot)
	if err != nil {
		return err
	}
	s, ok := p.(ClockSkewer)
	if !ok {
		return errors.New("the client's process cannot move its clock")
	}
	if err := s.SkewClock(d); err != nil {
		return fmt.Errorf("skew %s's clock by %v: %w", target, d, err)
	}
	return nil
}
