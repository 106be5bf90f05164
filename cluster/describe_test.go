package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/topology"
)

// TestDescribeOnStartedServers starts one server of each lock kind and asks
// its kind to describe it, as the benchmark does for its record of the
// machine: a version, and the settings that decide what a lock costs.
func TestDescribeOnStartedServers(t *testing.T) {
	tests := []struct {
		kind    topology.Kind
		setting string // one the description must hold
	}{
		{topology.Redis, "appendonly"},
		{topology.ZooKeeper, "mode"},
		{topology.Postgres, "fsync"},
		{topology.Etcd, "members"},
		{topology.MySQL, "innodb_flush_log_at_trx_commit"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topo, err := Start(ctx, topology.Of(topology.Single(tt.kind)), External{})
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			k, err := KindOf(tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			d, err := k.Describe(ctx, topo.Endpoints()[tt.kind])
			if err != nil {
				t.Fatal(err)
			}
			if d.Version == "" {
				t.Errorf("%s describes no version: %+v", tt.kind, d)
			}
			if _, ok := d.Settings[tt.setting]; !ok {
				t.Errorf("%s's description has no %s: %+v", tt.kind, tt.setting, d.Settings)
			}
		})
	}
}
