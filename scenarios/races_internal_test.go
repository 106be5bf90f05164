package scenarios

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/impls"
)

// TestParseRaces: a race lands on the row it names, and a race for a row
// the table lacks, a second one for the same row, or a row without its
// race fails, so races.md cannot drift from expectations.md unnoticed.
func TestParseRaces(t *testing.T) {
	const expectations = `| lock | topology | scenario | fenced | expected | why |
|---|---|---|---|---|---|
| zookeeper | zk-ensemble | leader-isolated | no | unsafe | the session is expired, in some runs |
| zookeeper | zk-ensemble | leader-isolated | yes | safe | the fence refuses the stale holder |
`
	tests := []struct {
		name    string
		races   string
		wantErr string
		race    string // the unfenced row's race once parsed
	}{
		{"none", "", "", ""},
		{"one race", "| zookeeper | zk-ensemble | leader-isolated | no | the reconnect |\n", "", "the reconnect"},
		{"a row the table lacks", "| zookeeper | single | leader-isolated | no | the reconnect |\n", "has no row", ""},
		{"the same row twice", "| zookeeper | zk-ensemble | leader-isolated | no | a |\n| zookeeper | zk-ensemble | leader-isolated | no | b |\n", "a second race", ""},
		{"no race named", "| zookeeper | zk-ensemble | leader-isolated | no |  |\n", "no race named", ""},
		{"a column short", "| zookeeper | zk-ensemble | leader-isolated | the reconnect |\n", "want 5", ""},
		{"fenced misspelt", "| zookeeper | zk-ensemble | leader-isolated | n | the reconnect |\n", "want yes or no", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := parseExpectations(expectations)
			if err != nil {
				t.Fatal(err)
			}
			err = parseRaces("| lock | topology | scenario | fenced | race |\n|---|---|---|---|---|\n"+tc.races, rows)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseRaces: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rows[rowKey("zookeeper", "zk-ensemble", "leader-isolated", false)].Race; got != tc.race {
				t.Errorf("unfenced race %q, want %q", got, tc.race)
			}
			if got := rows[rowKey("zookeeper", "zk-ensemble", "leader-isolated", true)].Race; got != "" {
				t.Errorf("fenced row got the race %q, which races.md does not name", got)
			}
		})
	}
}

// TestRacesTableLoads: the committed races.md lands on the committed
// table, and the cell the issue names first carries its race.
func TestRacesTableLoads(t *testing.T) {
	e, err := Expected("zookeeper", "zk-ensemble", "leader-isolated", false)
	if err != nil {
		t.Fatal(err)
	}
	if e.Race == "" {
		t.Error("zookeeper@zk-ensemble/leader-isolated has no race, though races.md names one")
	}
}

// TestBriefHasNoRace: make test runs each of its cells a fixed number of
// times and must pass on every commit, so none of them may turn on a race
// (races.md): such a cell is left to `bench matrix`, which runs it until
// its answer is stable, or it gets a schedule that forces the window.
func TestBriefHasNoRace(t *testing.T) {
	t.Setenv(cluster.ServersEnv, cluster.ServersLocal) // every topology's cells, as the table is judged
	cells, err := Cells(impls.All(), Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Brief(cells) {
		e, err := c.Expect()
		if err != nil {
			t.Fatal(err)
		}
		if e.Race != "" {
			t.Errorf("make test runs %s, whose verdict turns on a race (%s): leave it to bench matrix (briefPlans' Leave) or force its window", c.Name(), e.Race)
		}
	}
}
