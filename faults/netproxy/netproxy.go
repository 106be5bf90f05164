// Package netproxy puts a TCP proxy on every client-to-server link of a
// scenario, so a link can be cut (existing connections closed, new ones
// refused), slowed, or pointed at another server (a fail-over moving a
// virtual address). It uses Shopify's toxiproxy as a library, in process:
// the proxies live in the orchestrating process, which is never paused.
package netproxy

import (
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Net holds the proxies of one run.
type Net struct {
	server *toxiproxy.ApiServer
	mu     sync.Mutex
	links  []*Link
}

// New returns an empty set of proxies.
func New() *Net {
	return &Net{server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
}

// Link is one client's path to one server.
type Link struct {
	Client int
	Server string // the server's name, e.g. "redis-3"
	Addr   string // what the client dials: 127.0.0.1:port of the proxy
	proxy  *toxiproxy.Proxy
}

// Link starts a proxy from a fresh loopback port to upstream for client.
func (n *Net) Link(client int, server, upstream string) (*Link, error) {
	name := fmt.Sprintf("client-%d->%s", client, server)
	p := toxiproxy.NewProxy(n.server, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start proxy %s: %w", name, err)
	}
	l := &Link{Client: client, Server: server, Addr: p.Listen, proxy: p}
	n.mu.Lock()
	n.links = append(n.links, l)
	n.mu.Unlock()
	return l, nil
}

// Links returns the links matching client (-1: any) and server ("": any).
func (n *Net) Links(client int, server string) []*Link {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*Link
	for _, l := range n.links {
		if (client < 0 || l.Client == client) && (server == "" || l.Server == server) {
			out = append(out, l)
		}
	}
	return out
}

// String names the link as the timeline shows it.
func (l *Link) String() string { return fmt.Sprintf("client %d -> %s", l.Client, l.Server) }

// Cut closes the link's connections and refuses new ones until Heal.
func (l *Link) Cut() { l.proxy.Stop() }

// Heal accepts connections again on the same address.
func (l *Link) Heal() error {
	if err := l.proxy.Start(); err != nil && err != toxiproxy.ErrProxyAlreadyStarted {
		return fmt.Errorf("heal %s: %w", l, err)
	}
	return nil
}

// Slow adds latency to every byte in both directions.
func (l *Link) Slow(d time.Duration) error {
	for _, stream := range []string{"upstream", "downstream"} {
		js := fmt.Sprintf(`{"name":"slow-%s","type":"latency","stream":%q,"attributes":{"latency":%d}}`, stream, stream, d.Milliseconds())
		if _, err := l.proxy.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			return fmt.Errorf("slow %s: %w", l, err)
		}
	}
	return nil
}

// Retarget points the link at another server, closing existing connections:
// what a client sees when a virtual address moves to a promoted replica.
func (l *Link) Retarget(server, upstream string) error {
	if err := l.proxy.Update(&toxiproxy.Proxy{Listen: l.proxy.Listen, Upstream: upstream, Enabled: true}); err != nil {
		return fmt.Errorf("retarget %s to %s: %w", l, server, err)
	}
	l.Server = server
	return nil
}

// Close stops every proxy.
func (n *Net) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.links {
		l.proxy.Stop()
	}
	n.links = nil
}
