package cluster

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/docker"
	"github.com/locklab/locklab/topology"
)

// TestKindAnswersEveryQuestion asks every registered server kind every
// question the lab asks of a kind without starting it, so a kind that
// leaves one unanswered fails here by its name instead of showing up as a
// silent n/a or an empty column. A "no" is an answer only with its reason.
// (Roles has no unanswered value: a kind whose roles nothing moves says
// so with the zero Roles.)
func TestKindAnswersEveryQuestion(t *testing.T) {
	questions := []struct {
		name   string
		answer func(k ServerKind) string // "" is no answer
	}{
		{"Package", func(k ServerKind) string { return k.Package() }},
		{"Image", func(k ServerKind) string { return k.Image() }},
		{"Cheapest", func(k ServerKind) string { return k.Cheapest() }},
		{"CostUnit", func(k ServerKind) string { return k.CostUnit() }},
		{"RoundTripCounter", func(k ServerKind) string { return k.RoundTripCounter() }},
		{"OwnServers", func(k ServerKind) string {
			o := k.OwnServers()
			if o.None != "" {
				if o.Flag != "" || o.Env != "" {
					return "" // a "no" that names a flag anyway is no answer
				}
				return o.None
			}
			if o.Flag == "" || o.Env == "" || o.Usage == "" {
				return ""
			}
			return o.Flag
		}},
		{"ClockShift", func(k ServerKind) string { return reason(k.ClockShift()) }},
		{"HolderPartition", func(k ServerKind) string { return reason(k.HolderPartition(1)) }},
		{"SilentClient", func(k ServerKind) string { return reason(k.SilentClient(nil)) }},
		{"SingleServerFaults", func(k ServerKind) string { return reason(k.SingleServerFaults(1)) }},
		{"OneServerSession", func(k ServerKind) string { return reason(k.OneServerSession()) }},
		{"Describe without an address", func(k ServerKind) string {
			// No server runs here: an endpoint with no address must be
			// refused with a reason, not read past its end.
			_, err := k.Describe(context.Background(), topology.Endpoint{Kind: k.Kind()})
			if err == nil {
				return ""
			}
			return err.Error()
		}},
	}
	for _, name := range KindNames() {
		k, err := KindOf(topology.Kind(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range questions {
			t.Run(name+"/"+q.name, func(t *testing.T) {
				if q.answer(k) == "" {
					t.Errorf("server kind %s does not answer %s", name, q.name)
				}
			})
		}
	}
}

// reason is an error's answer: "yes" for nil, else its reason.
func reason(err error) string {
	if err == nil {
		return "yes"
	}
	return err.Error()
}

// TestKindOwnServersFlagsAreDistinct: each kind a user can run themselves
// adds a flag and reads a variable of its own (cmd/bench's serverFlags).
func TestKindOwnServersFlagsAreDistinct(t *testing.T) {
	claimed := map[string]topology.Kind{"-resource": "the protected counter", "LOCKLAB_RESOURCE_ADDR": "the protected counter"}
	for _, k := range OwnKinds() {
		o := k.OwnServers()
		for _, name := range []string{"-" + o.Flag, o.Env} {
			if other, dup := claimed[name]; dup {
				t.Errorf("%s and %s both claim %s", other, k.Kind(), name)
			}
			claimed[name] = k.Kind()
		}
	}
}

// TestNewServerKindProvides lists what adding a server kind takes, and
// checks every registered kind provides it:
//   - its cluster file: a file in cluster/ that registers the kind
//     (RegisterKind) and implements ServerKind, every question answered
//     (TestKindAnswersEveryQuestion);
//   - its topology declaration: a named topology (topology/) declares a
//     group of the kind for some lock;
//   - its image: docker/<Image()>/Dockerfile, embedded in docker.Contexts;
//   - its setup line: scripts/setup.sh installs its Package().
func TestNewServerKindProvides(t *testing.T) {
	setup, err := os.ReadFile(filepath.Join("..", "scripts", "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(b))
	}
	declared := declaredKinds()
	for _, name := range KindNames() {
		k, err := KindOf(topology.Kind(name))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			register := "RegisterKind(" + reflect.TypeOf(k).Name() + "{})"
			if !containsAny(sources, register) {
				t.Errorf("no file in cluster/ says %s", register)
			}
			if !declared[k.Kind()] {
				t.Errorf("no named topology declares a %s group", name)
			}
			if _, err := docker.Contexts.Open(k.Image() + "/Dockerfile"); err != nil {
				t.Errorf("image %q: %v", k.Image(), err)
			}
			if !strings.Contains(string(setup), "need+=("+k.Package()+")") {
				t.Errorf("scripts/setup.sh does not install %s", k.Package())
			}
		})
	}
}

// declaredKinds are the kinds of every group a named topology declares for
// a lock of any registered kind.
func declaredKinds() map[topology.Kind]bool {
	out := map[topology.Kind]bool{}
	for _, named := range topology.All() {
		for _, name := range KindNames() {
			for _, replicas := range []bool{false, true} {
				decl, err := named.Declare(topology.Need{Kind: topology.Kind(name), Replicas: replicas})
				if err != nil {
					continue
				}
				for _, g := range decl.Groups {
					out[g.Kind] = true
				}
			}
		}
	}
	return out
}

func containsAny(texts []string, s string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// TestKindOwnServersFromEnv: each own-servers kind's variable gives the
// run that kind's endpoint, and nothing else does.
func TestKindOwnServersFromEnv(t *testing.T) {
	for _, k := range OwnKinds() {
		t.Setenv(k.OwnServers().Env, "")
	}
	tests := []struct {
		env, value string
		kind       topology.Kind
		want       []string
	}{
		{"LOCKLAB_REDIS_ADDRS", "10.0.0.1:6379, 10.0.0.2:6379", topology.Redis, []string{"10.0.0.1:6379", "10.0.0.2:6379"}},
		{"LOCKLAB_ZK_ADDRS", "10.0.0.5:2181", topology.ZooKeeper, []string{"10.0.0.5:2181"}},
		{"LOCKLAB_PG_DSN", "postgres://u@10.0.0.6:5432/db", topology.Postgres, []string{"postgres://u@10.0.0.6:5432/db"}},
		{"LOCKLAB_ETCD_ADDRS", "10.0.0.7:2379,10.0.0.8:2379", topology.Etcd, []string{"10.0.0.7:2379", "10.0.0.8:2379"}},
		{"LOCKLAB_MYSQL_DSN", "u:p@tcp(10.0.0.9:3306)/db", topology.MySQL, []string{"u:p@tcp(10.0.0.9:3306)/db"}},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			e := ExternalFromEnv()
			if got := e.Lock.Addrs(tt.kind); !slices.Equal(got, tt.want) {
				t.Errorf("%s=%q gives %s %v, want %v", tt.env, tt.value, tt.kind, got, tt.want)
			}
			if len(e.Lock) != 1 {
				t.Errorf("%s alone gives %d kinds' servers, want 1", tt.env, len(e.Lock))
			}
		})
	}
}
