package engine

import (
	"context"
	"fmt"

	lin "github.com/locklab/locklab/linearizability"
	"github.com/locklab/locklab/nemesis"
)

// strikeStanding strikes the schedule's standing faults
// (nemesis.Schedule.Standing) before any client starts, each recorded as a
// fault that struck then and is not healed within the run: what the
// checker waits to see a grant after is its fault's strike, as for any
// condition set up before the workers start.
func (r *scheduleRun) strikeStanding(ctx context.Context) error {
	if len(r.s.Standing) == 0 {
		return nil
	}
	// Every client's links exist before the first is cut.
	for id := 0; id < r.s.Clients; id++ {
		if _, err := r.sys.endpoints(id); err != nil {
			return err
		}
	}
	for i, st := range r.s.Standing {
		k, err := nemesis.Lookup(st.Kind)
		if err != nil {
			return err
		}
		at := lin.Now()
		note, err := k.Inject(ctx, r.sys, st.Target)
		if err != nil {
			return fmt.Errorf("standing fault %d (%s %s): %w", i, st.Kind, st.Target, err)
		}
		inj := r.standingInjection(st)
		inj.Note = note + "; for the whole run"
		r.env.Rec.Record(lin.FaultEvent(at, 0, inj, ""))
		r.logf("standing fault %d/%d: %s %s", i+1, len(r.s.Standing), st.Kind, st.Target)
	}
	return nil
}

// standingInjection is the record of a standing fault: the client it
// strikes by id (its slot's id: no client has started yet) and servers.
func (r *scheduleRun) standingInjection(st nemesis.Step) lin.Injection {
	inj := lin.Injection{Kind: st.Kind, Target: st.Target, Risk: nemesis.RiskOf(st.Kind, st.Target)}
	target := st.Target
	if client, server, link := nemesis.SplitLink(target); link {
		target, inj.Servers = client, []string{server}
	}
	if slot, err := nemesis.ClientSlot(target); err == nil {
		inj.Clients = []int{slot}
	} else if inj.Servers == nil {
		inj.Servers = []string{target}
	}
	return inj
}

// healStanding heals the standing faults once the run has stopped, so
// nothing stays cut or stopped; what the heal says is no part of the run.
func (r *scheduleRun) healStanding() {
	for _, st := range r.s.Standing {
		if k, err := nemesis.Lookup(st.Kind); err == nil {
			k.Heal(context.Background(), r.sys, st.Target)
		}
	}
}

// needsProxies reports whether a fault of s acts on the clients' links to
// the lock servers (nemesis.ThroughProxy), so they dial through proxies.
func needsProxies(s nemesis.Schedule) bool {
	for _, st := range append(append([]nemesis.Step(nil), s.Standing...), s.Faults...) {
		if nemesis.NeedsProxies(st.Kind) {
			return true
		}
	}
	return false
}

// reach sets what the faults of s need the lock to do to reach it at all
// (nemesis.Reacher), for the checker: a lock that never does it was not
// exercised by them. Only when every fault of s needs it: a run with
// another fault (a drawn schedule's mix) exercised the lock by that one.
func (r *scheduleRun) reach() error {
	reach := ""
	for i, st := range append(append([]nemesis.Step(nil), r.s.Standing...), r.s.Faults...) {
		k, err := nemesis.Lookup(st.Kind)
		if err != nil {
			return err
		}
		re, ok := k.(nemesis.Reacher)
		if !ok || (i > 0 && re.Reach() != reach) {
			return nil
		}
		reach = re.Reach()
	}
	r.env.Reach = reach
	return nil
}
