package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/topology"
)

// etcd alone and as the etcd-cluster topology's three members, on
// loopback, on hosts of their own and as containers: each starts, answers a
// write through every member, names one leader, counts what it served,
// survives a member's crash and restart with its data, and leaves no
// process behind.
func TestEtcdStartsRolesAndStops(t *testing.T) {
	tests := []struct {
		topology string
		hosts    bool // each member on a host of its own, as under network faults
		servers  string
		members  int
		leaders  int
	}{
		{topology.SingleName, false, ServersLocal, 1, 1},
		{"etcd-cluster", false, ServersLocal, 3, 1},
		{"etcd-cluster", true, ServersLocal, 3, 1},
		{"etcd-cluster", false, ServersContainers, 3, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/hosts=%v/%s", tt.topology, tt.hosts, tt.servers), func(t *testing.T) {
			if tt.servers == ServersContainers {
				containerMode(t)
			}
			ctx := context.Background()
			named, err := topology.Lookup(tt.topology)
			if err != nil {
				t.Fatal(err)
			}
			decl, err := named.Declare(topology.Need{Kind: topology.Etcd})
			if err != nil {
				t.Fatal(err)
			}
			decl.Hosts = tt.hosts
			skipUnlessStartsHere(t, decl)
			topo, err := Start(ctx, decl, External{})
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			nodes := topo.Lock(topology.Etcd)
			if len(nodes) != tt.members {
				t.Fatalf("started %d members, want %d", len(nodes), tt.members)
			}
			kind, err := KindOf(topology.Etcd)
			if err != nil {
				t.Fatal(err)
			}
			ep := topo.Endpoints()[topology.Etcd]
			c, err := etcdClient(ep.Addrs, topo.Dialer())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Every member serves a linearizable read of a write made
			// through another: they are one cluster, not three.
			if _, err := c.Put(ctx, "k", "v"); err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes {
				one, err := etcdClient([]string{n.Addr}, topo.Dialer())
				if err != nil {
					t.Fatal(err)
				}
				r, err := one.Get(ctx, "k")
				one.Close()
				if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
					t.Fatalf("read on %s: %v %v", n.Name, r, err)
				}
			}
			leaders, follower := 0, (*Node)(nil)
			for _, n := range nodes {
				role, err := topo.Role(ctx, n.Name)
				if err != nil {
					t.Fatal(err)
				}
				switch role {
				case "leader":
					leaders++
				case "follower":
					follower = n
				default:
					t.Errorf("%s: role %q", n.Name, role)
				}
			}
			if leaders != tt.leaders {
				t.Errorf("%d leaders, want %d", leaders, tt.leaders)
			}
			if tt.topology == topology.SingleName {
				// Served reads the members' metrics from the root
				// namespace, as the benchmark (which runs on loopback) does.
				served, err := kind.Served(ctx, ep, true)
				if err != nil || served < 1 {
					t.Errorf("served %v, %v; want at least the write", served, err)
				}
				send, closeFn, err := kind.OpenCheapest(ctx, ep)
				if err != nil {
					t.Fatal(err)
				}
				if err := send(ctx); err != nil {
					t.Errorf("cheapest request: %v", err)
				}
				closeFn()
			}
			if follower != nil {
				// A follower crashed and restarted with its data rejoins.
				if err := follower.Kill(); err != nil {
					t.Fatal(err)
				}
				if err := follower.Restart(ctx, true); err != nil {
					t.Fatal(err)
				}
			}
			var pids []int
			for _, n := range nodes {
				pids = append(pids, n.PID())
			}
			topo.Close()
			for _, pid := range pids {
				if alive(pid) {
					t.Errorf("etcd pid %d outlived Close", pid)
				}
			}
		})
	}
}

func TestEtcdMissingBinaryNamesPackage(t *testing.T) {
	t.Setenv(ServersEnv, ServersLocal)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("LOCKLAB_ETCD", "")
	_, err := StartEtcd(context.Background(), EtcdOptions{})
	if !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), "apt-get install -y etcd-server") {
		t.Fatalf("got %v, want a missing-binary error naming etcd-server", err)
	}
}

func TestSumMetric(t *testing.T) {
	body := strings.Join([]string{
		"# TYPE grpc_server_msg_received_total counter",
		`grpc_server_msg_received_total{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3`,
		`grpc_server_msg_received_total{grpc_method="LeaseKeepAlive",grpc_service="etcdserverpb.Lease",grpc_type="bidi_stream"} 4.5`,
		`grpc_server_msg_received_total_other 100`,
		`grpc_server_msg_sent_total{grpc_method="Range"} 7`,
	}, "\n")
	tests := []struct {
		name  string
		want  float64
		found bool
	}{
		{"grpc_server_msg_received_total", 7.5, true},
		{"grpc_server_msg_sent_total", 7, true},
		{"etcd_server_has_leader", 0, false},
	}
	for _, tt := range tests {
		got, found := sumMetric(body, tt.name)
		if got != tt.want || found != tt.found {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, found, tt.want, tt.found)
		}
	}
}
