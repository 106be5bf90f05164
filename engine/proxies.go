package engine

import (
	"errors"
	"fmt"
	"maps"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/netproxy"
	"github.com/locklab/locklab/topology"
)

// The clients of a schedule with a fault on their links to the lock
// servers (nemesis.ThroughProxy) dial those servers through in-process
// proxies, one per client and server (faults/netproxy); the system hands
// the links to the fault (nemesis.Proxies).

// Links returns the proxy links of the client in slot (-1: every client,
// killed ones too) to server ("": every server).
func (x *system) Links(slot int, server string) ([]*netproxy.Link, error) {
	if x.net == nil {
		return nil, errors.New("the run's clients do not dial through the proxy")
	}
	if slot < 0 {
		return x.net.Links(-1, server), nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case len(x.slots) == 0 && slot < x.next:
		// No client has started yet (a standing fault strikes before
		// them): the first clients' ids are their slots.
		return x.net.Links(slot, server), nil
	case slot >= len(x.slots):
		return nil, fmt.Errorf("no client slot %d", slot)
	}
	return x.net.Links(x.slots[slot].ID, server), nil
}

// endpoints are the servers client id dials: the run's own, with the
// lock's nodes (its declared kind's) behind a proxy of the client's own
// when the run has proxies.
func (x *system) endpoints(id int) (topology.Endpoints, error) {
	if x.net == nil {
		return x.env.Topo.Endpoints(), nil
	}
	kind := x.env.Impl.Backend.Kind
	nodes := x.env.Topo.Lock(kind)
	if len(nodes) == 0 {
		return nil, errors.New("faults on the clients' links need lock servers the lab starts itself")
	}
	sk, err := cluster.KindOf(kind)
	if err != nil {
		return nil, err
	}
	// The nodes as the client sees them, at their proxies' addresses: the
	// kind writes the endpoint as it does for the servers themselves (a
	// DSN for a database, where a bare address failed to parse: explore
	// of pg-for-update on pg-idle-timeouts with proxy-reset drawn).
	var proxied []*cluster.Node
	for _, n := range nodes {
		addr := ""
		if links := x.net.Links(id, n.Name); len(links) > 0 {
			// A retry of the same client dials the same proxy.
			addr = links[0].Addr
		} else {
			l, err := x.net.Link(id, n.Name, n.Addr)
			if err != nil {
				return nil, err
			}
			addr = l.Addr
		}
		proxied = append(proxied, &cluster.Node{Name: n.Name, Addr: addr})
	}
	out := maps.Clone(x.env.Topo.Endpoints())
	out[kind] = sk.Endpoint(proxied)
	return out, nil
}
