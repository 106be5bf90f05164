package topology_test

import (
	"maps"
	"testing"
	"time"

	"github.com/locklab/locklab/topology"
)

// A profile gives every server of a kind its settings, lets a topology's
// own settings win but for the timeouts that are the topology's point,
// whose length is the profile's, and leaves the judge's resource alone.
func TestProfileApply(t *testing.T) {
	tests := []struct {
		topology string
		need     topology.Need
		profile  topology.Profile
		group    string
		want     map[string]string
	}{
		{topology.RedisSentinelName, topology.Need{Kind: topology.Redis}, topology.Production, topology.SentinelGroup,
			map[string]string{"down-after-milliseconds": "30000", "failover-timeout": "180000"}},
		{topology.RedisSentinelName, topology.Need{Kind: topology.Redis}, topology.Fast, topology.SentinelGroup,
			map[string]string{"down-after-milliseconds": "500", "failover-timeout": "2000"}},
		{topology.RedisClusterName, topology.Need{Kind: topology.Redis}, topology.Production, "redis",
			map[string]string{"cluster-node-timeout": "15000", "repl-diskless-sync-delay": "0"}},
		{topology.ZKEnsembleName, topology.Need{Kind: topology.ZooKeeper}, topology.Production, "zookeeper",
			map[string]string{"tickTime": "2000", "initLimit": "10", "syncLimit": "5"}},
		{topology.EtcdClusterName, topology.Need{Kind: topology.Etcd}, topology.Production, "etcd",
			map[string]string{"heartbeat-interval": "100", "election-timeout": "1000"}},
		// The synchronous replica's synchronous_commit is the topology's
		// point and stays on; the profile's goes to the replica.
		{topology.PGReplicaSyncName, topology.Need{Kind: topology.Postgres}, topology.Fast, "postgres",
			map[string]string{"synchronous_commit": "on", "synchronous_standby_names": "*"}},
		{topology.PGReplicaSyncName, topology.Need{Kind: topology.Postgres}, topology.Fast, topology.PGReplicaName,
			map[string]string{"synchronous_commit": "off"}},
		{topology.PGReplicaAsyncName, topology.Need{Kind: topology.Postgres}, topology.Production, "postgres",
			map[string]string{"synchronous_commit": "on"}},
		{topology.PGIdleTimeoutsName, topology.Need{Kind: topology.Postgres}, topology.Production, "postgres",
			map[string]string{"synchronous_commit": "on", "idle_in_transaction_session_timeout": "10s", "idle_session_timeout": "10s"}},
		{topology.PGIdleTimeoutsName, topology.Need{Kind: topology.Postgres}, topology.Fast, "postgres",
			map[string]string{"synchronous_commit": "off", "idle_in_transaction_session_timeout": "500ms", "idle_session_timeout": "500ms"}},
		{topology.MySQLWaitTimeoutName, topology.Need{Kind: topology.MySQL}, topology.Production, "mysql",
			map[string]string{"wait_timeout": "10"}},
		{topology.MySQLReplicaSemisyncName, topology.Need{Kind: topology.MySQL}, topology.Production, "mysql",
			map[string]string{"server_id": "1", "log_bin": "mysql-bin", "binlog_format": "ROW", "rpl_semi_sync_master_enabled": "ON",
				"rpl_semi_sync_master_timeout": "10000", "rpl_semi_sync_master_wait_point": "AFTER_SYNC", "rpl_semi_sync_master_wait_no_slave": "OFF"}},
		{topology.MySQLReplicaSemisyncName, topology.Need{Kind: topology.MySQL}, topology.Fast, "mysql",
			map[string]string{"server_id": "1", "log_bin": "mysql-bin", "binlog_format": "ROW", "rpl_semi_sync_master_enabled": "ON",
				"rpl_semi_sync_master_timeout": "3600000", "rpl_semi_sync_master_wait_point": "AFTER_SYNC", "rpl_semi_sync_master_wait_no_slave": "OFF"}},
	}
	for _, tt := range tests {
		t.Run(tt.topology+"/"+tt.profile.Name+"/"+tt.group, func(t *testing.T) {
			named, err := topology.Lookup(tt.topology)
			if err != nil {
				t.Fatal(err)
			}
			d, err := named.Declare(tt.need)
			if err != nil {
				t.Fatal(err)
			}
			d = tt.profile.Apply(d.Merge(topology.Of(topology.ResourceNode())))
			g, ok := d.Group(tt.group)
			if !ok {
				t.Fatalf("no group %s in %+v", tt.group, d.Groups)
			}
			if !maps.Equal(g.Settings, tt.want) {
				t.Fatalf("settings %v, want %v", g.Settings, tt.want)
			}
			if r, _ := d.Group(topology.ResourceName); len(r.Settings) != 0 {
				t.Fatalf("the resource got settings %v", r.Settings)
			}
		})
	}
}

func TestLookupProfile(t *testing.T) {
	tests := []struct {
		name    string
		want    string
		wantErr bool
	}{
		{"", topology.FastName, false},
		{"fast", topology.FastName, false},
		{"production", topology.ProductionName, false},
		{"slow", "", true},
	}
	for _, tt := range tests {
		p, err := topology.LookupProfile(tt.name)
		if (err != nil) != tt.wantErr || p.Name != tt.want {
			t.Errorf("LookupProfile(%q) = %q, %v; want %q, error %v", tt.name, p.Name, err, tt.want, tt.wantErr)
		}
	}
}

// The production profile's leases are 10 s or more, and each profile runs
// with a TTL it accepts.
func TestProfileTTL(t *testing.T) {
	tests := []struct {
		profile topology.Profile
		ttl     time.Duration
		ok      bool
	}{
		{topology.Fast, time.Second, true},
		{topology.Fast, 100 * time.Millisecond, true},
		{topology.Production, 10 * time.Second, true},
		{topology.Production, 30 * time.Second, true},
		{topology.Production, time.Second, false},
	}
	for _, tt := range tests {
		if err := tt.profile.CheckTTL(tt.ttl); (err == nil) != tt.ok {
			t.Errorf("%s with %v: %v", tt.profile.Name, tt.ttl, err)
		}
		if err := tt.profile.CheckTTL(tt.profile.TTL); err != nil {
			t.Errorf("%s refuses its own TTL: %v", tt.profile.Name, err)
		}
	}
}
