package benchmark_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locklab/locklab/benchmark"
	"github.com/locklab/locklab/record"
)

// A topology the run did not measure says why: the one its requests share
// a path with, or why its servers cannot start where the run ran.
func TestReportSaysWhyATopologyWasLeftOut(t *testing.T) {
	rep, err := benchmark.ReadReport("../results/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Others == nil {
		t.Fatal("the committed report measured no other topology: the test shows nothing")
	}
	rep.Others.LeftOut = []record.LeftOutTopology{
		{Topology: "redis-sentinel-min-replicas", SameRequestsAs: "redis-sentinel"},
		{Topology: "redis-sentinel", CannotStart: "container mode starts no Redis Sentinel"},
	}
	var b bytes.Buffer
	if err := benchmark.WriteMarkdown(rep, &b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"the same path as on the topology named: `redis-sentinel-min-replicas` (as `redis-sentinel`)",
		"not measured, as their servers cannot start in this run's mode: `redis-sentinel` (container mode starts no Redis Sentinel)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report does not say %q", want)
		}
	}
}
