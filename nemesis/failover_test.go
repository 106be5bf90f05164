package nemesis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/topology"
)

// topoSystem is the part of System a server fault uses, over a real
// topology; it has no clients.
type topoSystem struct{ topo *cluster.Topology }

var errNoClients = errors.New("this system has no clients")

func (x topoSystem) ServerWithRole(ctx context.Context, role string) (string, error) {
	for _, n := range x.topo.Nodes() {
		if r, err := x.topo.Role(ctx, n.Name); err == nil && r == role {
			return n.Name, nil
		}
	}
	return "", errors.New("no server has role " + role)
}

func (s topoSystem) Client(int) (Process, error)                     { return nil, errNoClients }
func (s topoSystem) ReplaceClient(context.Context, int) (int, error) { return 0, errNoClients }
func (s topoSystem) TTL() time.Duration                              { return time.Second }
func (s topoSystem) ClientHost(int) (*hosts.Host, error)             { return nil, errNoClients }
func (s topoSystem) LockServers() []string                           { return []string{"redis-1", ReplicaName} }
func (s topoSystem) Clients() int                                    { return 0 }

func (s topoSystem) Server(name string) (*cluster.Node, error) {
	if n := s.topo.Node(name); n != nil {
		return n, nil
	}
	return nil, errors.New("no server " + name)
}

func (s topoSystem) ServerHost(name string) (*hosts.Host, error) {
	n, err := s.Server(name)
	if err != nil {
		return nil, err
	}
	return n.Host, nil
}

// TestFailOverMovesAddress fails a real Redis master over to its real
// replica and checks what a client on another host sees at the master's
// address it already knew: its pool (whose connection the dead master's
// kernel closed) dials that address again and reaches a master, not a
// replica, holding what had been replicated before the crash.
func TestFailOverMovesAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	if err := hosts.Available(); err != nil {
		t.Skipf("a fail-over moves an address between hosts: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topo, err := cluster.Start(ctx, topology.Declaration{Groups: []topology.Group{topology.RedisNodes(1), topology.ReplicaOf("redis-1")}, Hosts: true}, cluster.External{})
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	client, err := topo.Net.AddHost(ctx, "client-0")
	if err != nil {
		t.Fatal(err)
	}
	master := topo.Lock(topology.Redis)[0]
	c := redis.NewClient(&redis.Options{Addr: master.Addr, Dialer: client.DialContext, PoolSize: 1, MaxRetries: -1,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	defer c.Close()
	if err := c.Set(ctx, "lock", "client-0", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The replica may still be syncing when the topology is up: ask again
	// until it acknowledges (a bound from the test's context, not a speed).
	for {
		n, err := c.Wait(ctx, 1, time.Second).Result()
		if err == nil && n == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the replica did not acknowledge the write: %d, %v", n, err)
		}
	}

	note, err := failOver{}.Inject(ctx, topoSystem{topo}, master.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(note)
	if _, err := (failOver{}).Heal(ctx, topoSystem{topo}, master.Name); err != nil {
		t.Fatal(err)
	}
	// The record is read from the servers: the replica acknowledged every
	// write before the kill, so its offset at the promotion reaches the
	// master's at the kill.
	rec := TakePromotion(topoSystem{topo}, master.Name)
	if rec == nil || !rec.Known() || rec.Lacked() || rec.Promoted != ReplicaName {
		t.Errorf("promotion record %+v, want %s promoted with everything", rec, ReplicaName)
	} else {
		t.Log(rec)
	}

	tests := []struct {
		name  string
		check func() error
	}{
		{"the master's address reads the replicated key", func() error {
			v, err := c.Get(ctx, "lock").Result()
			if err != nil || v != "client-0" {
				return errors.New("GET lock = " + v + ", " + errString(err))
			}
			return nil
		}},
		{"and talks to a master", func() error {
			info, err := c.Info(ctx, "replication").Result()
			if err != nil || !strings.Contains(info, "role:master") {
				return errors.New("INFO replication: " + info + errString(err))
			}
			return c.Set(ctx, "lock", "client-1", 0).Err()
		}},
	}
	for _, tc := range tests {
		if err := tc.check(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
