package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesBadResults: each way a results dir can be wrong is an
// error naming the file, never a site with a hole in it.
func TestLoadRefusesBadResults(t *testing.T) {
	cell := `[{"impl":"none","scenario":"contention","verdict":"unsafe","expected":"unsafe","runs":1,"run_verdicts":["unsafe"],"seeds":[1],"counterexample":"counterexamples/x.html"}]`
	tests := []struct {
		name  string
		files map[string]string
		want  string // in the error
	}{
		{"no matrix", map[string]string{"bench.json": "{}"}, "has no correctness.json"},
		{"a matrix that does not decode", map[string]string{"correctness.json": "{"}, "decode"},
		{"an empty matrix", map[string]string{"correctness.json": "[]"}, "no cells"},
		{"a counterexample that is not there", map[string]string{"correctness.json": cell}, "names counterexamples/x.html, which is not there"},
		{"a chart that is not there", map[string]string{"correctness.json": cell, "counterexamples/x.html": "<html>",
			"bench.json": `{"charts":["pairs.svg"]}`}, "names pairs.svg"},
		{"explore that does not decode", map[string]string{"correctness.json": cell, "counterexamples/x.html": "<html>",
			"explore/explore.json": `{"rows":7}`}, "explore.json"},
		{"a topology's explore timeline that is not there", map[string]string{"correctness.json": cell, "counterexamples/x.html": "<html>",
			"explore/zk-ensemble/explore.json": `{"rows":[{"impl":"zookeeper","timeline":"t.html"}]}`}, "names explore/zk-ensemble/t.html"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestLoadExploreTopologies: a topology's own explore table joins the
// main one, each row naming its topology and its files found under the
// topology's dir.
func TestLoadExploreTopologies(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"correctness.json":                 `[{"impl":"zookeeper","scenario":"contention","verdict":"safe","expected":"safe","runs":1,"run_verdicts":["safe"],"seeds":[1]}]`,
		"explore/explore.json":             `{"seed":1,"rows":[{"impl":"zookeeper","verdict":"safe"}]}`,
		"explore/zk-ensemble/explore.json": `{"seed":1,"rows":[{"impl":"zookeeper","verdict":"unsafe","timeline":"t.html"}]}`,
		"explore/zk-ensemble/t.html":       "<html>",
	})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range r.Explore.Rows {
		got = append(got, row.Row()+" "+string(row.Verdict)+" "+row.Timeline)
	}
	want := []string{"zookeeper safe ", "zookeeper @ zk-ensemble unsafe zk-ensemble/t.html"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// writeFiles makes a results dir of the named files.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadCountedExercise: a cell whose file has exercised_runs counted
// them, even at 0; one whose file has none (a matrix older than the
// count) did not, in the main matrix and in a topology's own alike.
func TestLoadCountedExercise(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"correctness.json": `[{"impl":"a","scenario":"contention","verdict":"safe","runs":3,"exercised_runs":3},
			{"impl":"b","scenario":"contention","verdict":"not exercised","runs":3,"exercised_runs":0},
			{"impl":"c","scenario":"contention","verdict":"safe","runs":3}]`,
		"topologies/zk-ensemble/correctness.json": `[{"impl":"zookeeper","topology":"zk-ensemble","scenario":"contention","verdict":"safe","runs":3}]`,
	})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a": true, "b": true, "c": false, "zookeeper": false}
	for _, c := range r.Matrix {
		if got := r.Counted(c); got != want[c.Impl] {
			t.Errorf("%s: counted %v, want %v", c.Impl, got, want[c.Impl])
		}
	}
	if len(r.Matrix) != len(want) {
		t.Errorf("%d cells, want %d", len(r.Matrix), len(want))
	}
}
