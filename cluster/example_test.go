package cluster_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/topology"
)

// A server kind answers every question about itself, so no other package
// keeps a list of kinds or switches on one: how to start it, what package
// installs it, what a member is now, the cheapest request the benchmark
// sends and what its servers count. Here Redis's kind is asked about a
// server the lab starts; without redis-server installed the example
// prints why it could not start one, and fails.
func ExampleKindOf() {
	kind, err := cluster.KindOf(topology.Redis)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("kind:", kind.Kind(), "package:", kind.Package(), "image:", kind.Image())
	fmt.Println("cheapest request:", kind.Cheapest(), "counted in:", kind.CostUnit())
	fmt.Println("ensembles:", kind.Ensembles())

	ctx := context.Background()
	servers, err := cluster.Start(ctx, topology.Of(topology.RedisNodes(1)), cluster.External{})
	if err != nil {
		fmt.Println("no Redis could start:", err)
		return
	}
	defer servers.Close()
	node := servers.Node("redis-1")
	role, err := kind.Role(ctx, node)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(node.Name, "is a", role)
	// Output:
	// kind: redis package: redis-server image: redis
	// cheapest request: PING counted in: Redis commands
	// ensembles: the lab starts redis as independent servers only
	// redis-1 is a master
}
