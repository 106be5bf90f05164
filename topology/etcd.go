package topology

// EtcdClusterName is the etcd cluster's name.
const EtcdClusterName = "etcd-cluster"

// The etcd cluster of three members, each on a host of its own when the
// run's faults need hosts (cutting its leader off the rest while they keep
// a quorum), on loopback otherwise. A lock of one etcd runs on the single
// topology, which carries any kind with one server.
func init() {
	Register(Named{
		Name:    EtcdClusterName,
		Summary: "an etcd cluster of three members (each on a host of its own under network faults); clients are given every member",
		Alone:   "its members hear a heartbeat every 50 ms and elect a new leader after 500 ms without one, which a busy core can cause",
		Kinds:   []Kind{Etcd},
		Declare: func(need Need) (Declaration, error) {
			return Ensemble(need, Etcd, 3)
		},
	})
}
