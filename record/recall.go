package record

import (
	"slices"
	"sort"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/topology"
)

// Recall is how much of what the matrix proves explore finds on its own:
// of the (lock, topology) pairs with an unfenced cell the matrix found
// unsafe, those an unfenced exploration of the same pair also found
// unsafe, never told the scenario. A fixed schedule's row does not count:
// it was told.
type Recall struct {
	Pairs int         `json:"pairs"`
	Found int         `json:"found"`
	Rows  []RecallRow `json:"rows"`
}

// RecallRow is one pair the matrix proves unsafe unfenced.
type RecallRow struct {
	Impl     string `json:"impl"`
	Topology string `json:"topology"`
	// Scenarios are the matrix's unfenced scenarios unsafe for the pair.
	Scenarios []string `json:"scenarios"`
	// Explored: an unfenced random exploration of the pair exists.
	Explored bool `json:"explored"`
	// Found: one of them was unsafe; Replayed: its minimal schedule
	// failed again when replayed.
	Found    bool `json:"found"`
	Replayed bool `json:"replayed,omitempty"`
	// What the explorations of the pair tried, added up.
	Seeds           int             `json:"seeds,omitempty"`
	Minutes         float64         `json:"minutes,omitempty"`
	FaultsJudged    int             `json:"faults_judged,omitempty"`
	FaultsExercised int             `json:"faults_exercised,omitempty"`
	Verdict         checker.Verdict `json:"verdict,omitempty"` // the exploration's, when not found
}

// Ratio is Found over Pairs (0 with no pairs).
func (r Recall) Ratio() float64 {
	if r.Pairs == 0 {
		return 0
	}
	return float64(r.Found) / float64(r.Pairs)
}

// ExploreRecall measures explore's recall against the matrix.
func ExploreRecall(cells []Cell, explored []ExploreRow) Recall {
	type pair struct{ impl, topo string }
	unsafe := map[pair][]string{}
	for _, c := range cells {
		if c.Fencing || !checker.SafetyViolated(c.Verdict) {
			continue
		}
		p := pair{c.Impl, topology.Or(c.Topology)}
		unsafe[p] = append(unsafe[p], c.Scenario)
	}
	var out Recall
	for p, scenarios := range unsafe {
		sort.Strings(scenarios)
		row := RecallRow{Impl: p.impl, Topology: p.topo, Scenarios: slices.Compact(scenarios)}
		for _, x := range explored {
			if x.Impl != p.impl || topology.Or(x.Topology) != p.topo || x.Fenced || x.Fixed != "" || x.Skipped != "" {
				continue
			}
			row.Explored = true
			row.Seeds += max(len(x.Seeds), 1)
			row.Minutes += x.Minutes
			row.FaultsJudged += x.FaultsJudged
			row.FaultsExercised += x.FaultsExercised
			if checker.SafetyViolated(x.Verdict) {
				row.Found = true
				row.Replayed = row.Replayed || checker.Reproduced(x.Verdict, x.Replays...)
			} else if !row.Found {
				row.Verdict = x.Verdict
			}
		}
		if row.Found {
			row.Verdict = ""
			out.Found++
		}
		out.Rows = append(out.Rows, row)
	}
	out.Pairs = len(out.Rows)
	sort.Slice(out.Rows, func(i, j int) bool {
		a, b := out.Rows[i], out.Rows[j]
		if a.Topology != b.Topology {
			return a.Topology < b.Topology
		}
		return a.Impl < b.Impl
	})
	return out
}
