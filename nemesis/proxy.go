package nemesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/faults/netproxy"
	"github.com/locklab/locklab/impls"
)

// ProxyReset is a client's link to one lock server refusing its
// connections at once (a reset, not lost packets), through the in-process
// proxy every client then dials instead of the server (faults/netproxy).
// It needs no hosts of the lab's own, so it reaches container mode too.
const ProxyReset = "proxy-reset"

func init() { register(proxyReset{}) }

// Proxies is what a run whose clients dial the lock servers through the
// in-process proxy gives a fault: every client's link to a server. A run
// has them when a step names a kind that goes through them (ThroughProxy).
type Proxies interface {
	// Links returns the links of the client in slot (-1: every client) to
	// server ("": every server).
	Links(slot int, server string) ([]*netproxy.Link, error)
}

// ThroughProxy is a Kind that acts on the clients' links to the lock
// servers (Proxies): a run with a step of such a kind routes every
// client's lock connections through a proxy of its own.
type ThroughProxy interface {
	ThroughProxy()
}

// NeedsProxies reports whether a fault of the named kind needs the
// clients' lock links to go through the in-process proxy.
func NeedsProxies(kind string) bool {
	_, ok := kinds[kind].(ThroughProxy)
	return ok
}

type proxyReset struct{}

func (proxyReset) Name() string  { return ProxyReset }
func (proxyReset) ThroughProxy() {}

// Applies: a client process dialing lock servers by the addresses the lab
// gives it. A Sentinel group or a Redis Cluster tells its clients where
// the master is, and they dial that address, past the proxy.
func (proxyReset) Applies(spec impls.Spec, topo Topology) error {
	if err := clientApplies(spec, topo); err != nil {
		return err
	}
	if err := serverApplies(spec, topo); err != nil {
		return err
	}
	if hasMaster(topo) {
		return errors.New("its clients learn the master's address from the servers and dial it past the proxy")
	}
	return nil
}

// Targets: each client slot's link to each lock server.
func (proxyReset) Targets(topo Topology) []string {
	var out []string
	for _, c := range clientTargets(topo) {
		for _, s := range topo.Servers {
			out = append(out, Link(c, s.Name))
		}
	}
	return out
}

func (proxyReset) Inject(ctx context.Context, sys System, target string) (string, error) {
	links, err := proxyLinks(sys, target)
	if err != nil {
		return "", err
	}
	for _, l := range links {
		l.Cut()
	}
	return "connections refused at once", nil
}

func (proxyReset) Heal(ctx context.Context, sys System, target string) (string, error) {
	links, err := proxyLinks(sys, target)
	if err != nil {
		return "", err
	}
	for _, l := range links {
		if err := l.Heal(); err != nil {
			return "", err
		}
	}
	return "connections accepted again", nil
}

// proxyLinks are the proxy links a Link target names.
func proxyLinks(sys System, target string) ([]*netproxy.Link, error) {
	p, ok := sys.(Proxies)
	if !ok {
		return nil, errors.New("the run's clients do not dial through the proxy")
	}
	client, server, ok := SplitLink(target)
	if !ok {
		return nil, fmt.Errorf("target %q is not a client's link to a server (client-N@server)", target)
	}
	slot, err := ClientSlot(client)
	if err != nil {
		return nil, err
	}
	links, err := p.Links(slot, server)
	if err != nil {
		return nil, err
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("no link from %s to %s", client, server)
	}
	return links, nil
}
