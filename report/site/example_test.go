package site_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/record"
	"github.com/locklab/locklab/report/site"
)

// Two cells of the matrix make a site of four pages: the front page, a
// page for the lock, and one per cell. The front page colours each cell by
// its verdict, says how many of its runs exercised the fault, and whether
// it agrees with the expectation.
func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "site-example-")
	defer os.RemoveAll(dir)
	r := &site.Results{Dir: dir, Matrix: []record.Cell{
		{Impl: "redis-setnx-px", Scenario: "contention", Verdict: "safe", Expected: "safe",
			Runs: 1, RunVerdicts: []checker.Verdict{"safe"}, ExercisedRuns: 1, Seeds: []int64{7}},
		{Impl: "redis-setnx-px", Scenario: "pause-past-ttl", Verdict: "safe", Expected: "unsafe",
			Runs: 1, RunVerdicts: []checker.Verdict{"safe"}, ExercisedRuns: 1, Seeds: []int64{8}},
	}}
	out := filepath.Join(dir, "site")
	pages, err := site.Write(out, r, site.Options{Out: out, Repo: dir, MatrixTTL: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(pages, "\n"))
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	fmt.Println(strings.Contains(string(index), "redis-setnx-px / pause-past-ttl: safe (1 of 1 exercised), expected unsafe (differs)"))
	// Output:
	// cells/redis-setnx-px--contention.html
	// cells/redis-setnx-px--pause-past-ttl.html
	// index.html
	// locks/redis-setnx-px.html
	// true
}
