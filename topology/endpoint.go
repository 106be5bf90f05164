package topology

// Endpoint is how a client reaches the lock servers of one kind: what a
// lock's factory is given, whatever the topology behind it. A lock reads
// the addresses of its kind and needs to know nothing else of the shape
// (one server, an ensemble, a Sentinel group).
type Endpoint struct {
	Kind Kind `json:"kind"`
	// Addrs are the servers a client may talk to: each independent node
	// (Redlock), every member of an ensemble (a ZooKeeper or etcd client
	// picks one), or a DSN for a database.
	Addrs []string `json:"addrs"`
	// Via says how the addresses are used when not directly: "sentinel"
	// (Addrs are sentinels, Master names the group) or "cluster" (Addrs
	// are cluster seeds). Empty: the addresses are the servers.
	Via    string `json:"via,omitempty"`
	Master string `json:"master,omitempty"`
}

// Endpoints are a run's lock endpoints by kind.
type Endpoints map[Kind]Endpoint

// Addrs returns the addresses of kind (nil when the run has none).
func (e Endpoints) Addrs(kind Kind) []string { return e[kind].Addrs }

// First returns the first address of kind ("" when none): the DSN of a
// database, the one server of a single-node lock.
func (e Endpoints) First(kind Kind) string {
	if a := e[kind].Addrs; len(a) > 0 {
		return a[0]
	}
	return ""
}

// At is the endpoints of one kind at addrs: what a test or a single-kind
// tool gives a lock's factory.
func At(kind Kind, addrs ...string) Endpoints {
	return Endpoints{kind: {Kind: kind, Addrs: addrs}}
}
