package topology

// The etcd cluster of three members, each on a host of its own, so that a
// fault can cut its leader or the member a client talks to off the rest
// while they keep a quorum. A lock of one etcd runs on the single
// topology, which carries any kind with one server.
func init() {
	Register(Named{
		Name:    "etcd-cluster",
		Summary: "an etcd cluster of three members, each on a host of its own; clients are given every member",
		Kinds:   []Kind{Etcd},
		Declare: func(need Need) (Declaration, error) {
			return Ensemble(need, Etcd, 3)
		},
	})
}
