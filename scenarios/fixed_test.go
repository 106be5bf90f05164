package scenarios_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/hosts"
	"github.com/locklab/locklab/engine"
	"github.com/locklab/locklab/impls"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/topology"
)

// TestScenarioSchedules pins which scenarios are fixed schedules over the
// nemesis (one fault mechanism with explore) and which are in-process
// workloads with no fault, with the reason, and checks that every cell of
// a scheduled scenario (a demo's, which the matrix leaves out, too) has a
// schedule that validates: one fault, at a failpoint (or
// redlock-partition's two cuts), with the hosts a network fault needs. It starts no server; the verdict matrix
// runs the cells.
func TestScenarioSchedules(t *testing.T) {
	tests := []struct {
		scenario string
		schedule bool
		why      string // why a scenario is still scripted
	}{
		{"pause-past-ttl", true, ""},
		{"late-release", true, ""},
		{"holder-crash", true, ""},
		{"crash-after-setnx", true, ""},
		{"server-restart", true, ""},
		{"holder-partition", true, ""},
		{"holder-partition-long", true, ""},
		{"redlock-partition", true, ""},
		{"contention", false, "no fault"},
		{"release-hand-off", false, "no fault: a figure of how the lock hands over"},
		{"slow-work-past-ttl", true, ""},
		{"client-clock-skew", true, ""},
		{"redis-failover", true, ""},
		{"queued-waiter-crash", true, ""},
		{"queued-waiter-pause", true, ""},
		{"queued-waiter-crash-in-section", true, ""},
		{"redlock-restart", true, ""},
		{"redlock-restart-delayed", true, ""},
		{"redlock-clock-jump", true, ""},
		{"coupon", true, ""},
		{"re-entry", false, "no fault: a lesson's figure of code that takes the lock again while it holds it"},
		{"leader-isolated", true, ""},
		{"holder-server-cut", true, ""},
		{"holder-session-ended", true, ""},
		{"sentinel-master-split", true, ""},
		{"sentinel-master-kill", true, ""},
		{"sentinel-master-pause", true, ""},
		{"sentinel-split-at-grant", true, ""},
		{"sentinel-kill-at-grant", true, ""},
		{"sentinel-split-after-ack", true, ""},
		{"sentinel-isolated", true, ""},
		{"cluster-master-split", true, ""},
		{"cluster-master-kill", true, ""},
		{"primary-failover", true, ""},
		{"master-kill-under-lag", true, ""},
		{"sentinel-acked-replica-lost", true, ""},
		{"sentinel-rejoining-replica-promoted", true, ""},
		{"sentinel-split-brain", true, ""},
		{"promotion-under-lag", true, ""},
		{"primary-acked-standby-lost", true, ""},
		{"primary-split-brain", true, ""},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.scenario] = true
		t.Run(tt.scenario, func(t *testing.T) {
			s, err := scenarios.Lookup(tt.scenario)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Schedule != ""; got != tt.schedule {
				t.Fatalf("runs a fixed schedule: %v, want %v (%s)", got, tt.schedule, tt.why)
			}
			if !tt.schedule {
				return
			}
			cells, err := scenarios.Cells(impls.All(), []string{tt.scenario})
			if err != nil {
				t.Fatal(err)
			}
			if s.Demo {
				cells = demoCells(s)
			}
			if len(cells) == 0 {
				// A schedule has no cell where none of its topologies can
				// start in this mode (container mode starts no Sentinel, no
				// Redis Cluster, no replica): skip, saying why.
				on := s.Topologies
				if len(on) == 0 {
					on = []string{topology.SingleName}
				}
				var cannot []string
				for _, top := range on {
					if err := scenarios.TopologyStartsHere(t, top); err != nil {
						cannot = append(cannot, top+": "+err.Error())
					}
				}
				if len(cannot) == len(on) {
					t.Skipf("none of its topologies starts here:\n%s", strings.Join(cannot, "\n"))
				}
				// Nor where its fault needs the lab's hosts on a backend
				// without them (container mode, or no root): skip, saying
				// so, once some lock gives that reason (the others are out
				// for their own, e.g. too few nodes).
				kind := nemesis.Fixed[s.Schedule]("redlock", false, time.Second, checker.Bound(time.Second)).Faults[0].Kind
				if noHosts := hosts.Available(); noHosts != nil && nemesis.NeedsHosts(kind) {
					for _, spec := range impls.All() {
						for _, top := range on {
							if err := s.AppliesOn(spec, top, false); err != nil && strings.Contains(err.Error(), noHosts.Error()) {
								t.Skipf("its %s needs the lab's hosts: %v", kind, noHosts)
							}
						}
					}
					t.Fatalf("no cell, and no lock says the backend's reason %q", noHosts)
				}
				t.Fatal("no cell")
			}
			for _, c := range cells {
				sch := nemesis.Fixed[s.Schedule](c.Impl.Name, c.Fencing, time.Second, checker.Bound(time.Second))
				sch.Topology = c.Topology
				if err := sch.Validate(); err != nil {
					t.Errorf("%s: %v", c.Name(), err)
					continue
				}
				if tt.scenario == "redlock-partition" {
					// Two cuts of every client, no failpoint: a minority of
					// the nodes, then a majority.
					if len(sch.Faults) != 2 || sch.Faults[0].After != "" {
						t.Errorf("%s: want two cuts, got %+v", c.Name(), sch.Faults)
					}
					for i, leaves := range []bool{true, false} {
						if cut, l := nemesis.CutLeavesQuorum(sch.Faults[i], c.Impl.Backend.Nodes); !cut || l != leaves {
							t.Errorf("%s: fault %d (%s) leaves a quorum %v, want %v", c.Name(), i, sch.Faults[i].Target, l, leaves)
						}
					}
				} else if tt.scenario == "sentinel-isolated" {
					// One cut at a set time, no failpoint: nothing may
					// change, and grants must go on through it.
					if len(sch.Faults) != 1 || sch.Faults[0].After != "" || sch.Faults[0].Window != nemesis.KeepsGranting {
						t.Errorf("%s: want one cut with a keeps-granting window, got %+v", c.Name(), sch.Faults)
					}
				} else if split, ok := map[string]string{
					"sentinel-split-brain": nemesis.SplitBrainWithClients,
					"primary-split-brain":  nemesis.PrimarySplitWithClients,
				}[tt.scenario]; ok {
					// One split at a set time, no failpoint: both sides
					// contend through it, the old one around the holder.
					if len(sch.Faults) != 1 || sch.Faults[0].After != "" || sch.Faults[0].Kind != split {
						t.Errorf("%s: want one split brain at a set time, got %+v", c.Name(), sch.Faults)
					}
				} else if tt.scenario == "client-clock-skew" {
					// One skew from the start, no failpoint: the skewed
					// client meets the others' locks at any moment.
					if len(sch.Faults) != 1 || sch.Faults[0].After != "" || sch.Faults[0].Target != "client-0" {
						t.Errorf("%s: want one skew of client-0 at a set time, got %+v", c.Name(), sch.Faults)
					}
				} else if len(sch.Faults) != 1 || sch.Faults[0].After == "" {
					t.Errorf("%s: want one fault at a failpoint, got %+v", c.Name(), sch.Faults)
				}
				// Hosts come from the faults, or from a topology whose servers
				// are each on a host of their own (an ensemble).
				named, _ := topology.Lookup(c.Topology)
				base, _ := c.Impl.Backend.On(named)
				job, err := engine.ScenarioJob(s, engine.Options{Impl: c.Impl, Topology: c.Topology})
				if err != nil {
					t.Errorf("%s: %v", c.Name(), err)
					continue
				}
				if want := nemesis.NeedsHosts(sch.Faults[0].Kind) || base.Hosts; job.Topology.Hosts != want {
					t.Errorf("%s: hosts %v, want %v", c.Name(), job.Topology.Hosts, want)
				}
			}
		})
	}
	for _, name := range scenarios.Names() {
		if !seen[name] {
			t.Errorf("scenario %s is not in this table: say whether it is a fixed schedule", name)
		}
	}
}

// demoCells are the cells of a demo scenario, which scenarios.Cells leaves
// out of the matrix: every lock it applies to on the single topology,
// without fencing.
func demoCells(s scenarios.Scenario) []scenarios.Cell {
	var cells []scenarios.Cell
	for _, spec := range impls.All() {
		if s.AppliesOn(spec, topology.SingleName, false) == nil {
			cells = append(cells, scenarios.Cell{Impl: spec, Topology: topology.SingleName, Scenario: s.Name})
		}
	}
	return cells
}
