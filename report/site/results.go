package site

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/record"
)

// The files of a results dir the site reads, relative to it.
const (
	CorrectnessFile = "correctness.json"
	BenchFile       = "bench.json"
	ExploreFile     = "explore/explore.json"
	MutantsFile     = "mutants.json"
)

// Results is what the site renders: the JSON every long command writes,
// decoded into the types those commands write it from. Only the matrix is
// required; a results dir without a benchmark, explore or mutants run
// renders those sections as not run yet.
type Results struct {
	// Dir is the results dir the files were read from; every file the
	// JSON names (counterexamples, charts) is relative to it.
	Dir     string
	Matrix  []record.Cell
	Bench   *record.Bench        // nil: no bench.json
	Explore *record.ExploreTable // nil: no explore/explore.json
	Mutants []record.Mutant      // nil: no mutants.json
	// Uncounted holds the cells (by their page, cellPage) read from a
	// matrix written before runs that exercised the fault were counted:
	// their file has no exercised_runs, so their ExercisedRuns of 0 is no
	// count, and the pages print no "0 of 3 exercised" for them.
	Uncounted map[string]bool
}

// exercisedRuns is how a cell's file says whether it counted the runs
// that exercised its fault (record.Cell.ExercisedRuns): absent, it did not.
type exercisedRuns struct {
	Count *int `json:"exercised_runs"`
}

// uncounted reads which cells of a matrix file carry no exercised_runs.
func (r *Results) uncounted(name string) ([]bool, error) {
	var counts []exercisedRuns
	if _, err := readJSON(r.Dir, name, &counts); err != nil {
		return nil, err
	}
	out := make([]bool, len(counts))
	for i, c := range counts {
		out[i] = c.Count == nil
	}
	return out, nil
}

// markUncounted notes a cell whose file did not count its exercised runs.
func (r *Results) markUncounted(c record.Cell) {
	if r.Uncounted == nil {
		r.Uncounted = map[string]bool{}
	}
	r.Uncounted[cellPage(c)] = true
}

// Counted reports whether a cell's file counted the runs that exercised
// its fault.
func (r *Results) Counted(c record.Cell) bool { return !r.Uncounted[cellPage(c)] }

// Load reads the results in dir. A missing matrix, a file that does not
// decode, or a file the results name that is not there is an error naming
// the file: a site with a dead link or a silently empty table would be
// worse than none.
func Load(dir string) (*Results, error) {
	r := &Results{Dir: dir}
	found, err := readJSON(dir, CorrectnessFile, &r.Matrix)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s has no %s: run `go run ./cmd/bench matrix` first", dir, CorrectnessFile)
	}
	if len(r.Matrix) == 0 {
		return nil, fmt.Errorf("%s: no cells", filepath.Join(dir, CorrectnessFile))
	}
	uncounted, err := r.uncounted(CorrectnessFile)
	if err != nil {
		return nil, err
	}
	for i, c := range r.Matrix {
		if uncounted[i] {
			r.markUncounted(c)
		}
	}
	if err := r.loadTopologies(); err != nil {
		return nil, err
	}
	var b record.Bench
	if found, err := readJSON(dir, BenchFile, &b); err != nil {
		return nil, err
	} else if found {
		r.Bench = &b
	}
	var x record.ExploreTable
	if found, err := readJSON(dir, ExploreFile, &x); err != nil {
		return nil, err
	} else if found {
		r.Explore = &x
	}
	if err := r.loadExploreTopologies(); err != nil {
		return nil, err
	}
	if _, err := readJSON(dir, MutantsFile, &r.Mutants); err != nil {
		return nil, err
	}
	if err := r.checkFiles(); err != nil {
		return nil, err
	}
	return r, nil
}

// TopologiesDir holds a matrix per topology run on its own (`bench matrix
// -topology NAME -out results/topologies/NAME`), beside the main one.
const TopologiesDir = "topologies"

// loadTopologies adds the cells of every topologies/NAME/correctness.json
// to the matrix, their files' paths made relative to the results dir. A
// cell the main matrix already holds (same lock, topology, scenario and
// fencing) is not added twice.
func (r *Results) loadTopologies() error {
	dirs, err := filepath.Glob(filepath.Join(r.Dir, TopologiesDir, "*", CorrectnessFile))
	if err != nil {
		return err
	}
	key := func(c record.Cell) string { return c.Key() }
	have := map[string]bool{}
	for _, c := range r.Matrix {
		have[key(c)] = true
	}
	for _, p := range dirs {
		rel, _ := filepath.Rel(r.Dir, filepath.Dir(p))
		var cells []record.Cell
		if _, err := readJSON(r.Dir, filepath.ToSlash(filepath.Join(rel, CorrectnessFile)), &cells); err != nil {
			return err
		}
		uncounted, err := r.uncounted(filepath.ToSlash(filepath.Join(rel, CorrectnessFile)))
		if err != nil {
			return err
		}
		for i, c := range cells {
			if have[key(c)] {
				continue
			}
			if uncounted[i] {
				r.markUncounted(c)
			}
			for _, f := range []*string{&c.Counterexample, &c.History} {
				if *f != "" {
					*f = filepath.ToSlash(filepath.Join(rel, *f))
				}
			}
			r.Matrix = append(r.Matrix, c)
			have[key(c)] = true
		}
	}
	return nil
}

// loadExploreTopologies adds the rows of every explore/NAME/explore.json
// (`make explore` explores each topology but the single one into a table
// of its own) to the explore table, each row naming its topology and its
// files' paths made relative to explore/.
func (r *Results) loadExploreTopologies() error {
	tables, err := filepath.Glob(filepath.Join(r.Dir, filepath.Dir(ExploreFile), "*", filepath.Base(ExploreFile)))
	if err != nil {
		return err
	}
	for _, p := range tables {
		name := filepath.Base(filepath.Dir(p))
		var x record.ExploreTable
		if _, err := readJSON(r.Dir, filepath.ToSlash(filepath.Join(filepath.Dir(ExploreFile), name, filepath.Base(ExploreFile))), &x); err != nil {
			return err
		}
		if r.Explore == nil {
			head := x
			head.Rows = nil
			r.Explore = &head
		}
		for _, row := range x.Rows {
			if row.Topology == "" {
				row.Topology = name
			}
			for _, f := range row.Files() {
				*f = name + "/" + *f
			}
			r.Explore.Rows = append(r.Explore.Rows, row)
		}
	}
	return nil
}

// readJSON decodes dir/name into v; found is false when there is no file.
func readJSON(dir, name string, v any) (found bool, err error) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read results: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("decode %s: %w", p, err)
	}
	return true, nil
}

// Linked is every file the results link, relative to Dir in slash form,
// with the file that names it: the counterexamples, histories and
// schedules the tables link, and the benchmark's charts.
func (r *Results) Linked() map[string]string {
	need := map[string]string{} // path relative to Dir -> who names it
	for _, c := range r.Matrix {
		for _, f := range []string{c.Counterexample, c.History} {
			if f != "" {
				need[f] = CorrectnessFile
			}
		}
	}
	if r.Bench != nil {
		for _, f := range r.Bench.Charts {
			need[f] = BenchFile
		}
	}
	if r.Explore != nil {
		for _, row := range r.Explore.Rows {
			for _, f := range row.Files() {
				need[filepath.ToSlash(filepath.Join(filepath.Dir(ExploreFile), *f))] = ExploreFile
			}
		}
	}
	return need
}

// checkFiles makes sure every file the results link exists.
func (r *Results) checkFiles() error {
	for f, by := range r.Linked() {
		if _, err := os.Stat(filepath.Join(r.Dir, filepath.FromSlash(f))); err != nil {
			return fmt.Errorf("%s names %s, which is not there: %w", filepath.Join(r.Dir, filepath.FromSlash(by)), f, err)
		}
	}
	return nil
}
