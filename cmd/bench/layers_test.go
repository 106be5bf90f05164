package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// layers places every package of the lab in the one-way flow of a run
// (DESIGN.md): a package imports only packages of lower layers. So a lock
// never knows the scenarios, the nemesis never knows the checker, servers
// never know locks, and the scenarios, which are data, never reach the
// engine that runs them. A new package must be given its place here.
var layers = [][]string{
	// Data and mechanisms that know nothing of the lab around them.
	{"linearizability", "topology", "quorum", "faults/failpoint", "faults/clockjump", "faults/netproxy",
		"cluster/leftovers", "docker", "docs", "impls/mutant", "report", "shard"},
	// The lab's own hosts, swept as leftovers are.
	{"cluster/hosts"},
	// The Locker interface, the protected counter, the packet faults, and
	// the judge, which needs nothing but the history.
	{"impls", "resource", "faults/netfault", "checker"},
	// The rows every long command writes (cells, mutants, explore, bench),
	// and the site that renders them: below everything that runs, so the
	// site links none of the servers' clients.
	{"record"},
	{"report/site"},
	// The Redis client the lock families share.
	{"impls/etcdclient", "impls/redisclient"},
	// Lock families and peers' adapters.
	{"impls/control", "impls/etcdlock", "impls/guest", "impls/mysqllock", "impls/peers", "impls/pglock", "impls/redisfair", "impls/redislock", "impls/redisson", "impls/redlock", "impls/zklock"},
	{"impls/all", "cluster"},
	// A guest adapter in Go around a lock of ours (the protocol's own
	// cost): a program of its own, above the lock it wraps.
	{"guests/lab-redis-setnx-px"},
	{"impls/conformance", "workload", "workload/docclaims", "workload/sale", "workload/takeover"},
	{"runner"},
	{"nemesis"},
	// Scenarios are data (a schedule, a workload or both named, the locks
	// and topologies they apply to, the expectation table), which the
	// engine reads and runs.
	{"scenarios"},
	{"engine"},
	{"benchmark"},
	{"lessons"},
	{"cmd/bench"},
}

// forbidden are imports the layers would allow but the design does not:
// the nemesis injects and records, it never judges; servers never know
// the locks they serve; the scenarios name a workload and a schedule, and
// never reach the code that runs either (a worker process, a client's
// section: the engine binds the names).
var forbidden = [][2]string{
	{"nemesis", "checker"},
	{"cluster", "impls"},
	{"runner", "checker"},
	{"scenarios", "runner"},
	{"scenarios", "workload"},
}

func TestImportsFlowOneWay(t *testing.T) {
	const module = "github.com/locklab/locklab/"
	rank := map[string]int{}
	for i, layer := range layers {
		for _, p := range layer {
			rank[module+p] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg, imports := f[0], f[1:]
		r, ok := rank[pkg]
		if !ok {
			t.Errorf("%s has no place in the layers: add it to layers in this file", strings.TrimPrefix(pkg, module))
			continue
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if ri, ok := rank[imp]; ok && ri >= r {
				t.Errorf("%s imports %s, which is not below it", strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module))
			}
			for _, f := range forbidden {
				if pkg == module+f[0] && (imp == module+f[1] || strings.HasPrefix(imp, module+f[1]+"/")) {
					t.Errorf("%s imports %s: the design forbids it", f[0], strings.TrimPrefix(imp, module))
				}
			}
		}
	}
}
