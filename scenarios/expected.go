package scenarios

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/topology"
)

// expectationsTable is the reviewed table of expected verdicts: one row per
// lock × scenario × fencing, each with its reason, written from the source
// documents and each lock's design. The matrix (`bench matrix` and the
// matrix test) compares every verdict with it. Change a row's verdict only
// with its reason, in the same commit.
//
//go:embed expectations.md
var expectationsTable string

// racesTable names the rows of expectationsTable whose verdict turns on a
// race the lab does not decide, each with the race: a table of its own, so
// the reviewed verdicts stay as they are and a row leaves it once a
// schedule forces its window.
//
//go:embed races.md
var racesTable string

// Expectation is the verdict a scenario should reach for a lock, and why.
type Expectation struct {
	Verdict Verdict
	Why     string
	// Race is the race the verdict turns on, from races.md, where the row
	// says the outcome can go either way run to run; empty where it does
	// not. `bench matrix` runs such a cell until its answer is stable
	// (checker.UntilStable).
	Race string
}

var (
	tableOnce sync.Once
	table     map[string]Expectation
	tableErr  error
)

func rowKey(impl, topo, scenario string, fencing bool) string {
	return fmt.Sprintf("%s|%s|%s|%t", impl, topology.Or(topo), scenario, fencing)
}

// profileRowKey is the key of a row for one profile: the default row's
// under the fast profile, which the table's main rows describe.
func profileRowKey(profile, impl, topo, scenario string, fencing bool) string {
	k := rowKey(impl, topo, scenario, fencing)
	if p := topology.OrFast(profile); p != topology.FastName {
		k += "|" + p
	}
	return k
}

// parseExpectations reads the Markdown tables' rows: the main table's
// | lock | topology | scenario | fenced | expected | why |
// and the profiles' table's, which name a profile other than the fast one
// before the verdict:
// | lock | topology | scenario | fenced | profile | expected | why |
func parseExpectations(text string) (map[string]Expectation, error) {
	out := map[string]Expectation{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| lock ") {
			continue
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		if len(cols) != 6 && len(cols) != 7 {
			return nil, fmt.Errorf("expectations.md line %d: %d columns, want 6 (or 7 with a profile)", i+1, len(cols))
		}
		for j := range cols {
			cols[j] = strings.TrimSpace(strings.Trim(strings.TrimSpace(cols[j]), "`"))
		}
		profile := ""
		if len(cols) == 7 {
			profile = cols[4]
			if _, err := topology.LookupProfile(profile); err != nil {
				return nil, fmt.Errorf("expectations.md line %d: %w", i+1, err)
			}
			if profile == topology.FastName {
				return nil, fmt.Errorf("expectations.md line %d: the fast profile's rows are the main table's", i+1)
			}
			cols = append(cols[:4], cols[5:]...)
		}
		var fenced bool
		if _, err := topology.Lookup(cols[1]); err != nil {
			return nil, fmt.Errorf("expectations.md line %d: %w", i+1, err)
		}
		switch cols[3] {
		case "yes":
			fenced = true
		case "no":
		default:
			return nil, fmt.Errorf("expectations.md line %d: fenced %q, want yes or no", i+1, cols[3])
		}
		v := Verdict(cols[4])
		if !checker.Expectable(v) {
			return nil, fmt.Errorf("expectations.md line %d: verdict %q is not one the table may expect", i+1, cols[4])
		}
		if cols[5] == "" {
			return nil, fmt.Errorf("expectations.md line %d: no reason given", i+1)
		}
		k := profileRowKey(profile, cols[0], cols[1], cols[2], fenced)
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("expectations.md line %d: a second row for %s on %s / %s %s", i+1, cols[0], cols[1], cols[2], profile)
		}
		out[k] = Expectation{Verdict: v, Why: cols[5]}
	}
	return out, nil
}

// parseRaces reads races.md's rows, | lock | topology | scenario | fenced |
// race |, onto the expectations they name: a race for a row the table does
// not have is an error, as is a second race for one row.
func parseRaces(text string, rows map[string]Expectation) error {
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| lock ") {
			continue
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		if len(cols) != 5 {
			return fmt.Errorf("races.md line %d: %d columns, want 5", i+1, len(cols))
		}
		for j := range cols {
			cols[j] = strings.TrimSpace(strings.Trim(strings.TrimSpace(cols[j]), "`"))
		}
		if cols[3] != "yes" && cols[3] != "no" {
			return fmt.Errorf("races.md line %d: fenced %q, want yes or no", i+1, cols[3])
		}
		if cols[4] == "" {
			return fmt.Errorf("races.md line %d: no race named", i+1)
		}
		k := rowKey(cols[0], cols[1], cols[2], cols[3] == "yes")
		e, ok := rows[k]
		if !ok {
			return fmt.Errorf("races.md line %d: expectations.md has no row | %s | %s | %s | %s |", i+1, cols[0], cols[1], cols[2], cols[3])
		}
		if seen[k] {
			return fmt.Errorf("races.md line %d: a second race for %s on %s / %s", i+1, cols[0], cols[1], cols[2])
		}
		seen[k] = true
		e.Race = cols[4]
		rows[k] = e
	}
	return nil
}

// loadTable reads the expectation table and the races onto it, once.
func loadTable() {
	table, tableErr = parseExpectations(expectationsTable)
	if tableErr == nil {
		tableErr = parseRaces(racesTable, table)
	}
}

// Expected returns the table's row for one cell, or an error when the
// table has none: a cell nobody reviewed has no expectation.
func Expected(impl, topo, scenario string, fencing bool) (Expectation, error) {
	tableOnce.Do(loadTable)
	if tableErr != nil {
		return Expectation{}, tableErr
	}
	e, ok := table[rowKey(impl, topo, scenario, fencing)]
	if !ok {
		f := "no"
		if fencing {
			f = "yes"
		}
		return Expectation{}, fmt.Errorf("scenarios/expectations.md has no row for | %s | %s | %s | %s |: review the cell and add one with its reason", impl, topology.Or(topo), scenario, f)
	}
	return e, nil
}

// ExpectedUnder returns the table's row for one cell under profile: the
// profile's own row when the table has one, else the default row (the
// fast profile's), or an error when it has neither.
func ExpectedUnder(profile, impl, topo, scenario string, fencing bool) (Expectation, error) {
	if p := topology.OrFast(profile); p != topology.FastName {
		tableOnce.Do(loadTable)
		if tableErr != nil {
			return Expectation{}, tableErr
		}
		if e, ok := table[profileRowKey(p, impl, topo, scenario, fencing)]; ok {
			return e, nil
		}
	}
	return Expected(impl, topo, scenario, fencing)
}

// ExpectedRows returns every row's key, for the test that every row names
// a cell that exists.
func ExpectedRows() ([]string, error) {
	tableOnce.Do(loadTable)
	var keys []string
	for k := range table {
		keys = append(keys, k)
	}
	return keys, tableErr
}
