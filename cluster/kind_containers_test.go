package cluster

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/locklab/locklab/docker"
	"github.com/locklab/locklab/topology"
)

// Every named topology, for every kind it carries, either starts in
// container mode or says why before any server starts. It runs in local
// mode and needs no Docker engine, so a topology or kind that container
// mode loses fails here by name in every make test, not only in a
// container-mode run that few make. A topology that starts there must
// have its kinds' images under docker/; the container-mode runs of the
// tests that start it (TestZooKeeperEnsemble, ...) hold that it does.
func TestEveryTopologyStartsInContainersOrSaysWhy(t *testing.T) {
	tests := []struct {
		topology string
		kind     topology.Kind
		want     string // "" when container mode starts it, else part of why not
	}{
		{topology.SingleName, topology.Redis, ""},
		{topology.SingleName, topology.ZooKeeper, ""},
		{topology.SingleName, topology.Etcd, ""},
		{topology.SingleName, topology.Postgres, ""},
		{topology.SingleName, topology.MySQL, ""},
		{topology.SingleName, topology.Sentinel, "container mode starts no Redis Sentinel"},
		{topology.SingleName, topology.RedisCluster, "container mode starts no Redis Cluster"},
		{"zk-ensemble", topology.ZooKeeper, ""},
		{"etcd-cluster", topology.Etcd, ""},
		{"pg-idle-timeouts", topology.Postgres, ""},
		{"mysql-wait-timeout", topology.MySQL, ""},
		{"pg-keepalives", topology.Postgres, ""},
		{"pg-replica-async", topology.Postgres, "PostgreSQL replica runs in local mode only"},
		{"pg-replica-sync", topology.Postgres, "PostgreSQL replica runs in local mode only"},
		{"mysql-replica-async", topology.MySQL, "MySQL replica runs in local mode only"},
		{"mysql-replica-semisync", topology.MySQL, "MySQL replica runs in local mode only"},
		{topology.PGReplicaSync2Name, topology.Postgres, "PostgreSQL replica runs in local mode only"},
		{topology.MySQLReplicaSemisync2Name, topology.MySQL, "MySQL replica runs in local mode only"},
		{topology.RedisSentinelName, topology.Redis, "container mode starts no Redis Sentinel"},
		{"redis-sentinel-min-replicas", topology.Redis, "container mode starts no Redis Sentinel"},
		{topology.RedisClusterName, topology.Redis, "container mode starts no Redis Cluster"},
	}
	type key struct {
		topology string
		kind     topology.Kind
	}
	want := map[key]string{}
	for _, tt := range tests {
		want[key{tt.topology, tt.kind}] = tt.want
	}
	seen := map[key]bool{}
	for _, named := range topology.All() {
		kinds := named.Kinds
		if len(kinds) == 0 {
			for _, k := range KindNames() {
				kinds = append(kinds, topology.Kind(k))
			}
		}
		for _, kind := range kinds {
			need := topology.Need{Kind: kind}
			if !named.Carries(need) {
				need.Replicas = true // a topology for locks that wait for replicas only
				if !named.Carries(need) {
					continue
				}
			}
			k := key{named.Name, kind}
			seen[k] = true
			t.Run(named.Name+"/"+string(kind), func(t *testing.T) {
				w, ok := want[k]
				if !ok {
					t.Fatalf("not in this table: say whether container mode starts %s on %s, and if not why", kind, named.Name)
				}
				decl, err := named.Declare(need)
				if err != nil {
					t.Fatal(err)
				}
				err = InContainers(decl)
				switch {
				case w == "" && err != nil:
					t.Fatalf("container mode refuses it: %v", err)
				case w != "" && (err == nil || !strings.Contains(err.Error(), w)):
					t.Fatalf("got %v, want an error saying %q", err, w)
				case w != "" && !strings.Contains(err.Error(), ServersEnv+"="+ServersLocal):
					t.Fatalf("%v: a refusal says which mode runs it", err)
				}
				if w == "" {
					for _, g := range decl.Groups {
						sk, err := KindOf(g.Kind)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := fs.Stat(docker.Contexts, sk.Image()+"/Dockerfile"); err != nil {
							t.Errorf("%s's image docker/%s: %v", g.Kind, sk.Image(), err)
						}
					}
				}
				// What a test in container mode asks says the same.
				t.Setenv(ServersEnv, ServersContainers)
				if here := StartsHere(decl); (here == nil) != (w == "") {
					t.Fatalf("StartsHere in container mode says %v, InContainers %v", here, err)
				}
				// And the lab's hosts are never the containers'.
				decl.Hosts = true
				if err := InContainers(decl); err == nil || !strings.Contains(err.Error(), "network namespaces") {
					t.Fatalf("on the lab's hosts: %v, want a refusal naming them", err)
				}
			})
		}
	}
	for _, tt := range tests {
		if !seen[key{tt.topology, tt.kind}] {
			t.Errorf("%s on %s is in the table but no topology carries it", tt.kind, tt.topology)
		}
	}
}

// skipUnlessStartsHere skips t with StartsHere's reason when decl's
// servers cannot start in this process's server mode (a Sentinel group in
// container mode): a refusal the topology declares is not a failure.
func skipUnlessStartsHere(t *testing.T, decl topology.Declaration) {
	t.Helper()
	if err := StartsHere(decl); err != nil {
		t.Skip(err)
	}
}
