package nemesis

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/topology"
)

// Some kinds cannot share a schedule. A kind that holds replication back
// for the whole run settles a delay queue on replicas' hosts before the
// first grant (holdsBack), and it must still be there when its own fault
// strikes: that lag is what the fault is about. A kind that puts the lab's
// firewall rules on hosts heals each host whole (netfault.Heal removes the
// lab's chain and its delay queue), so its heal on a held-back replica's
// host would lift the lag half way through the run, and a delay of its own
// there would meet the one already held ("already delayed by 5s"). Explore
// drew both into one schedule on redis-sentinel-min-replicas (seed 2 of
// redis-fair: a net-delay on a client after acked-replica-lost's settle),
// and the run ended in an error.

// holdsBack marks a Settler whose settle holds replication streams back
// until its own fault strikes.
type holdsBack interface{ holdsBackForTheRun() }

// rulesOnHosts marks a kind that puts firewall rules on hosts and heals
// each host whole.
type rulesOnHosts interface{ healsHostsWhole() }

func (replicaLost) holdsBackForTheRun()       {}
func (ackedStandbyLost) holdsBackForTheRun()  {}
func (laggingMasterKill) holdsBackForTheRun() {}
func (laggingPromotion) holdsBackForTheRun()  {}

func (netKind) healsHostsWhole()         {}
func (nodesCut) healsHostsWhole()        {}
func (splitWithHolder) healsHostsWhole() {}
func (splitBrain) healsHostsWhole()      {}
func (primarySplit) healsHostsWhole()    {}
func (replicationLag) healsHostsWhole()  {}

// A kind that acts on the clients' links through the in-process proxy
// (ThroughProxy) cannot share a schedule with one that puts the clients
// on hosts of their own either: the proxy listens on the lab's loopback,
// which a client in a namespace of its own cannot reach, so no worker
// started (explore on the single topology, etcd-lock seed 1: net-loss and
// proxy-reset drawn together; every lock failed the same way).

// clientsOnHosts says whether kind k runs the clients on hosts of their own.
func clientsOnHosts(k Kind) bool {
	sh, ok := k.(Shaper)
	return ok && sh.Shape(topology.Declaration{}).Hosts
}

// clash says why kinds a and b cannot share a schedule, or "" if they can.
func clash(a, b Kind) string {
	_, ah := a.(holdsBack)
	_, bh := b.(holdsBack)
	if ah && bh && a.Name() != b.Name() {
		// Each settles its own hold-back on the same replicas: one held
		// the replica another needs caught up (redis-sentinel-min-replicas,
		// redis-lua-setnx-expire: lagging-master-kill held redis-replica-1
		// back, rejoining-replica-promoted the other two, and
		// acked-replica-lost found one replica online, not two).
		return fmt.Sprintf("%s and %s each hold replication back for the whole run, in ways that undo each other", a.Name(), b.Name())
	}
	for _, p := range [][2]Kind{{a, b}, {b, a}} {
		x, y := p[0], p[1]
		if _, ok := x.(holdsBack); ok {
			if _, ok := y.(rulesOnHosts); ok {
				return fmt.Sprintf("%s holds replication back for the whole run, and %s heals the hosts it touches whole, which would lift that lag (or meet it with a delay of its own)", x.Name(), y.Name())
			}
		}
		if _, ok := x.(ThroughProxy); ok && clientsOnHosts(y) {
			return fmt.Sprintf("%s goes through the lab's in-process proxy, on its loopback, and %s puts the clients on hosts of their own, which cannot reach it", x.Name(), y.Name())
		}
	}
	return ""
}

// clashing returns why k cannot join a schedule of the given steps, or "".
func clashing(k Kind, steps []Step) string {
	for _, st := range steps {
		other, err := Lookup(st.Kind)
		if err != nil {
			continue
		}
		if why := clash(k, other); why != "" {
			return why
		}
	}
	return ""
}

// A client held at its failpoint while a fault strikes the servers (a
// step with a Holder) goes on after the fault and leaves the run once its
// section ends (the engine's hand-off): its slot holds an ended process
// from then on. A later step that names that client would write to it
// ("file already closed": explore on the single topology, etcd-lock seed
// 2, a clock skew on client-0 after the opening server-kill held it).

// leaves returns the slot of the client a step holds and lets leave, if any.
func leaves(st Step) (int, bool) {
	if st.Holder == "" || st.After == "" {
		return 0, false
	}
	slot, err := ClientSlot(st.Holder)
	return slot, err == nil
}

// namesSlot says whether target names client slot (client-N, or a link
// client-N@server).
func namesSlot(target string, slot int) bool {
	client, _, _ := strings.Cut(target, "@")
	n, err := ClientSlot(client)
	return err == nil && n == slot
}

// left returns why a step aimed at target cannot follow steps, or "".
func left(target string, steps []Step) string {
	for _, st := range steps {
		if slot, ok := leaves(st); ok && namesSlot(target, slot) {
			return fmt.Sprintf("%s left the run after the fault that held it at %s", st.Holder, st.After)
		}
	}
	return ""
}
