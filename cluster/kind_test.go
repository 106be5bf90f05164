package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/topology"
)

// TestZooKeeperEnsemble starts the zk-ensemble topology's servers and asks
// each its role: one leader and two followers make a quorum, where three
// standalone servers (a member that missed its ensemble lines) would each
// grant locks of their own.
func TestZooKeeperEnsemble(t *testing.T) {
	named, err := topology.Lookup("zk-ensemble")
	if err != nil {
		t.Fatal(err)
	}
	decl, err := named.Declare(topology.Need{Kind: topology.ZooKeeper})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topo, err := Start(ctx, decl, External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	var roles []string
	for _, n := range topo.Lock(topology.ZooKeeper) {
		r, err := topo.Role(ctx, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		roles = append(roles, r)
	}
	slices.Sort(roles)
	if want := []string{"follower", "follower", "leader"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	if got := len(topo.Endpoints().Addrs(topology.ZooKeeper)); got != 3 {
		t.Fatalf("clients are given %d addresses, want every member's 3", got)
	}
}
