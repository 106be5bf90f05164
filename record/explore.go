package record

import (
	"fmt"
	"sort"
	"strings"

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
	Topology string `json:"topology,omitempty"`
	Impl     string `json:"impl"`
	// Fenced: the resource refused stale fencing tokens (-fencing).
	Fenced  bool     `json:"fenced,omitempty"`
	Broken  bool     `json:"broken,omitempty"` // registered as BROKEN (a control or a known-bad lock)
	Fixed   string   `json:"fixed,omitempty"`  // a fixed schedule in place of a random one
	Without []string `json:"without,omitempty"`
	// Skipped says why the lock was not explored at all.
	Skipped  string          `json:"skipped,omitempty"`
	Minutes  float64         `json:"minutes_explored,omitempty"`
	Faults   int             `json:"faults_scheduled,omitempty"`
	Injected map[string]int  `json:"injected,omitempty"`
	Sections int             `json:"sections,omitempty"`
	Unknown  int             `json:"unknown,omitempty"`
	Verdict  checker.Verdict `json:"verdict,omitempty"`
	// Seeds are the seeds explored, in order (-seeds): the row's run is
	// the first to find the lock unsafe, else the first to find it stuck,
	// else the last tried; Minutes and the tallies add up over all of
	// them.
	Seeds []int64 `json:"seeds,omitempty"`
	// StuckSeeds are the seeds before the row's own that found the lock
	// stuck (no grant within the bound after a heal: a liveness failure).
	// Explore went on past them looking for two holders at once, which
	// a stuck run cannot show, and the row is the seed that found them.
	StuckSeeds []int64 `json:"stuck_seeds,omitempty"`
	// FaultsJudged counts the injected faults whose kinds declare when
	// they put a lock at risk, FaultsExercised those of them inside
	// whose danger window another client came for the lock: a safe row
	// with none exercised tested little.
	FaultsJudged    int `json:"faults_judged,omitempty"`
	FaultsExercised int `json:"faults_exercised,omitempty"`
	// NotStruck counts the scheduled faults that could not strike when
	// their moment came (engine.ScheduleRun.NotStruck).
	NotStruck int    `json:"not_struck,omitempty"`
	Detail    string `json:"detail,omitempty"`
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
	// ReplayHistories are the histories of the replays that did not fail
	// as the exploration did, one per such replay: why a counterexample
	// did not replay is read there.
	ReplayHistories []string `json:"replay_histories,omitempty"`
}

// Files are the row's files (relative to its table's directory), for
// whoever moves or checks them: the counterexample's schedule, history and
// timeline, and the histories of the replays that did not fail as it did.
// Empty ones are left out.
func (r *ExploreRow) Files() []*string {
	var out []*string
	for _, f := range append([]*string{&r.Schedule, &r.History, &r.Timeline}, replayPointers(r)...) {
		if *f != "" {
			out = append(out, f)
		}
	}
	return out
}

// replayPointers points at each of r's replay histories, in its own copy
// of them, so that a row copied from another shares none of its paths.
func replayPointers(r *ExploreRow) []*string {
	r.ReplayHistories = append([]string(nil), r.ReplayHistories...)
	out := make([]*string, len(r.ReplayHistories))
	for i := range r.ReplayHistories {
		out[i] = &r.ReplayHistories[i]
	}
	return out
}

// StuckFirst says which seeds found the lock stuck before the row's own
// found it unsafe ("stuck first, at seed 1, 2"), "" when none did: the
// one wording the table and the site show.
func (r ExploreRow) StuckFirst() string {
	if len(r.StuckSeeds) == 0 {
		return ""
	}
	seeds := make([]string, len(r.StuckSeeds))
	for i, s := range r.StuckSeeds {
		seeds[i] = fmt.Sprint(s)
	}
	return "stuck first, at seed " + strings.Join(seeds, ", ")
}

// NotStruckNote says how many drawn faults could not strike, "" when all
// did: the one wording the table and the site show.
func (r ExploreRow) NotStruckNote() string {
	if r.NotStruck == 0 {
		return ""
	}
	return fmt.Sprintf("%d not struck (the servers not in the state the fault needs then)", r.NotStruck)
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
