package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/cluster/leftovers"
	"github.com/locklab/locklab/shard"
)

// mergeCmd is `bench merge [-out DIR] PATH...`: it puts the partial
// results of a sharded run back together (each PATH a partial's file, or a
// directory of them) and writes the results an unsharded run writes, with
// the same writers. It refuses, writing nothing, a set that is not every
// shard of one run.
func mergeCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "directory for the merged results (default: results for matrix and mutants, results/explore for explore)")
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: merge needs the shards' partial results (files, or directories holding them)", errUsage)
	}
	parts, err := shard.Load(fs.Args()...)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	run, err := shard.Combine(parts)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *out == "" {
		*out = "results"
		if run.Command == "explore" {
			*out = filepath.Join("results", "explore")
		}
	}
	if err := checkOutDir("out", *out); err != nil {
		return err
	}
	var merge func(shard.Run, string, string, io.Writer) error
	switch run.Command {
	case "matrix":
		merge = mergeMatrix
	case "explore":
		merge = mergeExplore
	case "mutants":
		merge = mergeMutants
	default:
		return fmt.Errorf("%w: %s: no command %q shards its runs", errUsage, parts[0].Path, run.Command)
	}
	stage, err := leftovers.MakeDir("merge")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := merge(run, stage, *out, stdout); err != nil {
		return fmt.Errorf("merge %d %s shards: %w", run.Count, run.Command, err)
	}
	return nil
}
