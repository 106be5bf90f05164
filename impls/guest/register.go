package guest

import "github.com/locklab/locklab/impls"

// LoadErr is what went wrong reading the repository's manifests at start
// (nil if nothing): the registry cannot fail, so a test reports it.
var LoadErr error

func init() {
	root := Root()
	if root == "" {
		return
	}
	ms, err := LoadAll(root)
	LoadErr = err
	for _, m := range ms {
		impls.Register(Spec(m))
	}
}

// Spec is the registry's entry for a guest.
func Spec(m Manifest) impls.Spec {
	return impls.Spec{
		Name:       m.ImplName(),
		Summary:    m.Summary,
		Peer:       true,
		Guest:      true,
		Caps:       m.Capabilities.Impls(),
		Backend:    impls.Backend{Kind: m.Kind, Nodes: m.Nodes, Direct: true},
		RoundTrips: m.RoundTrips,
		Footprint:  m.Footprint,
		Source:     "guests/" + m.Name + "/",
		New: func(cfg impls.Config) (impls.Locker, error) {
			return Start(m, cfg, Options{spare: true})
		},
	}
}
