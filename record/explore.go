package record

import (
	"fmt"
	"sort"

	"github.com/locklab/locklab/checker"
)

// ExploreTable is results/explore/explore.json: what `bench explore -impl
// all` found, one row per lock (and per fixed schedule or rerun), written
// by the command and read by the report site.
type ExploreTable struct {
	Seed     int64        `json:"seed"`
	TTL      string       `json:"ttl"`
	Clients  int          `json:"clients"`
	Duration string       `json:"duration"`
	Note     string       `json:"note"`
	Rows     []ExploreRow `json:"rows"`
}

// ExploreRow is one line of results/explore/README.md and one element of
// its explore.json.
type ExploreRow struct {
	// Topology names the servers' topology; empty (a table older than the
	// axis) is the single one.
	Topology string   `json:"topology,omitempty"`
	Impl     string   `json:"impl"`
	Broken   bool     `json:"broken,omitempty"` // registered as BROKEN (a control or a known-bad lock)
	Fixed    string   `json:"fixed,omitempty"`  // a fixed schedule in place of a random one
	Without  []string `json:"without,omitempty"`
	// Skipped says why the lock was not explored at all.
	Skipped  string          `json:"skipped,omitempty"`
	Minutes  float64         `json:"minutes_explored,omitempty"`
	Faults   int             `json:"faults_scheduled,omitempty"`
	Injected map[string]int  `json:"injected,omitempty"`
	Sections int             `json:"sections,omitempty"`
	Unknown  int             `json:"unknown,omitempty"`
	Verdict  checker.Verdict `json:"verdict,omitempty"`
	Detail   string          `json:"detail,omitempty"`
	// On a counterexample: the minimal schedule, its files (relative to
	// the output directory), and the verdicts of replaying it after
	// shrinking.
	MinimalFaults   int               `json:"minimal_faults,omitempty"`
	MinimalDuration string            `json:"minimal_duration,omitempty"`
	ShrinkOutOfTime bool              `json:"shrink_out_of_time,omitempty"`
	Schedule        string            `json:"schedule,omitempty"`
	History         string            `json:"history,omitempty"`
	Timeline        string            `json:"timeline,omitempty"`
	Replays         []checker.Verdict `json:"replays,omitempty"`
}

// Row is the table row an explore row is in: its lock, and its topology
// when it is not the single one ("zookeeper @ zk-ensemble"), as Cell.Row.
func (r ExploreRow) Row() string { return rowName(r.Impl, r.Topology) }

// Tally lists injected faults as "kind N" pairs, sorted by kind: an
// explore row's Injected as every table prints it.
func Tally(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return out
}
