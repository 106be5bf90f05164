package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lessons"
)

// lessonsCmd regenerates the recorded parts of docs/lessons/ (verdicts,
// commands, timelines, counterexamples, figures) from fresh runs.
func lessonsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lessons", flag.ContinueOnError)
	dir := fs.String("dir", "docs/lessons", "the lesson pages")
	results := fs.String("results", "results", "where correctness.json and bench.json are read from")
	ttl := ttlFlag(fs, time.Second, "of every run")
	pages := fs.String("page", "", "comma-separated pages to regenerate, e.g. 05-lease-expires-under-a-pause (default: all)")
	noRun := fs.Bool("no-run", false, "rewrite the pages from docs/lessons/runs.json without running anything")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if err := checkOutDir("dir", *dir); err != nil {
		return err
	}
	list := cluster.SplitList(*pages)
	start := time.Now()
	err := lessons.Generate(ctx, lessons.Options{Dir: *dir, Results: *results, TTL: *ttl, Pages: list, NoRun: *noRun,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lessons regenerated in %s: %v\n", *dir, time.Since(start).Round(time.Second))
	return nil
}
